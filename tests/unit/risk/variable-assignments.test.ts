import { row, riskTable, useRiskFixture } from './fixture.js';

useRiskFixture();

riskTable('variables that change how everything else runs', [
  // Variables that change how everything else runs.
  row('PATH=/evil:$PATH ls', 'high', 'dangerous environment variable: PATH'),
  row('export LD_PRELOAD=x', 'high', 'dangerous environment variable: LD_PRELOAD'),
  row('declare -x BASH_ENV=/x', 'high', 'dangerous environment variable: BASH_ENV'),
  row('IFS=/ ; cat', 'high', 'dangerous environment variable: IFS'),
  row('read PROMPT_COMMAND', 'high', 'dangerous environment variable: PROMPT_COMMAND'),
  row('printf -v NODE_OPTIONS %s --require=/x', 'high', 'dangerous environment variable: NODE_OPTIONS'),
  row('mapfile -t LD_AUDIT < f', 'high', 'dangerous environment variable: LD_AUDIT'),
  row('declare -n ref=PATH', 'high', 'dangerous environment variable: PATH'),
  row('for GIT_CONFIG_COUNT in 1; do :; done', 'high', 'dangerous environment variable: GIT_CONFIG_COUNT'),
  row('HOME=/ ; rm -rf ~', 'high', 'changes how paths resolve: HOME'),
  row("PS1='$(rm -rf ~)'", 'high', 'prompt string can run commands: PS1'),
  row('printf -v greeting %s hi', 'low', 'read-only inspection'),
]);
