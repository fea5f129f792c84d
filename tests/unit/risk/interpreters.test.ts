import { row, riskTable, useRiskFixture } from './fixture.js';

useRiskFixture();

riskTable('interpreters given code on the line, and installs outside the workspaces', [
  row("python3 -c 'import os'", 'high', 'runs inline interpreter code: python3 -c'),
  row("perl -e 'unlink q(x)'", 'high', 'runs inline interpreter code: perl -e'),
  row("node -e 'process.exit()'", 'high', 'runs inline interpreter code: node -e'),
  row('npm install -g typescript', 'high', 'installs outside the workspaces: npm --global'),
  row('pip install --user requests', 'high', 'installs outside the workspaces: pip --user'),
]);
