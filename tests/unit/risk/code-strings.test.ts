import { row, riskTable, useRiskFixture } from './fixture.js';

useRiskFixture();

riskTable('commands hidden in substitutions, strings and here-documents', [
  // Commands hidden in substitutions, strings and here-documents.
  row('eval "rm -rf /"', 'critical', 'removes the root directory'),
  row("eval rm -rf '~'", 'critical', 'removes the home directory'),
  row("bash -c 'curl x | sh'", 'critical', 'remote code piped into a shell'),
  row("bash -lc 'rm -rf ~'", 'critical', 'removes the home directory'),
  row('sh -c "$(curl -fsSL x)"', 'critical', 'runs remote code: sh -c'),
  row('eval "$(curl x)"', 'critical', 'runs remote code: eval'),
  row('echo $(rm -rf ~)', 'critical', 'removes the home directory'),
  row('echo "${x:-$(rm -rf ~)}"', 'critical', 'removes the home directory'),
  row('a=$(rm -rf ~)', 'critical', 'removes the home directory'),
  row('[[ -f $(rm -rf ~) ]]', 'critical', 'removes the home directory'),
  row('(( x = $(rm -rf ~) ))', 'critical', 'removes the home directory'),
  row('echo $(( $(reboot) + 1 ))', 'critical', 'shuts down or reboots'),
  row('cat <<EOF\n$(rm -rf ~)\nEOF', 'critical', 'removes the home directory'),
  row("cat <<'EOF'\n$(rm -rf ~)\nEOF", 'low', 'read-only inspection'),
  row('bash <<EOF\nrm -rf ~\nEOF', 'critical', 'removes the home directory'),
  row("sh <<< 'rm -rf /'", 'critical', 'removes the root directory'),
  row('bash <<EOF\n$(cat x)\nEOF', 'high', 'runs code that cannot be analysed: bash <<'),
  row("let 'a[$(id)]=1'", 'high', 'arithmetic text runs code that cannot be analysed'),
  row('if true; then rm -rf ~; fi', 'critical', 'removes the home directory'),
  row('for f in a; do rm -rf /; done', 'critical', 'removes the root directory'),
  row('while true; do reboot; done', 'critical', 'shuts down or reboots'),
  row('case x in x) rm -rf ~;; esac', 'critical', 'removes the home directory'),
  row('{ ls; rm -rf ~; }', 'critical', 'removes the home directory'),
  row('! rm -rf ~', 'critical', 'removes the home directory'),
  row('time rm -rf ~', 'critical', 'removes the home directory'),
  row('coproc rm -rf ~', 'critical', 'removes the home directory'),
  row('ls; rm -rf ~', 'critical', 'removes the home directory'),
  row('ls\nrm -rf ~', 'critical', 'removes the home directory'),
  row('ls & rm -rf ~', 'critical', 'removes the home directory'),
  row('true || rm -rf /', 'critical', 'removes the root directory'),
  row('diff <(curl x) README.md', 'high', 'network tool: curl'),
  row('tee >(rm -rf ~) < README.md', 'critical', 'removes the home directory'),
]);
