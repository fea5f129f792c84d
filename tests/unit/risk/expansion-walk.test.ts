import { row, riskTable, sequenceTable, useRiskFixture } from './fixture.js';

useRiskFixture();

// CONTRACT §11 "Expansions that evaluate code": bash evaluates a variable's value as arithmetic in
// arithmetic contexts and array subscripts, and `a[$(cmd)]` in that value runs cmd (verified with
// bash 5.2). Only literal numbers and names the terminal's state knows to hold an integer pass.
riskTable('arithmetic contexts evaluate values as code', [
  row("x='a[$(rm -rf src)]'; : $((x))", 'high', 'arithmetic evaluates the value of x as code'),
  row("x='a[$(rm -rf src)]'; [[ x -eq 0 ]]", 'high', 'arithmetic evaluates the value of x as code'),
  row('[[ $x -eq 0 ]]', 'high', 'arithmetic evaluates a value that cannot be known: $x'),
  row('[[ 1 -lt 2 ]]', 'low', 'read-only inspection'),
  row('[[ x -ne 1 ]]', 'high', 'arithmetic evaluates the value of x as code'),
  // test and [ compare integers but evaluate no arithmetic.
  row('[ "$x" -eq 0 ]', 'low', 'read-only inspection'),
  row('let y=x', 'high', 'arithmetic evaluates the value of x as code'),
  row('let y=1+2', 'low', 'arithmetic'),
  row('let "y = x + 1"', 'high', 'arithmetic evaluates a value that cannot be known'),
  row('(( y = x ))', 'high', 'arithmetic evaluates the value of x as code'),
  row('(( n++ ))', 'high', 'arithmetic evaluates the value of n as code'),
  row('echo $((x + 1))', 'high', 'arithmetic evaluates the value of x as code'),
  row('echo $(( $x + 1 ))', 'high', 'arithmetic evaluates a value that cannot be known: $x'),
  row('echo $((1 + 2))', 'low', 'read-only inspection'),
  row('echo $((16#ff + 0x10))', 'low', 'read-only inspection'),
  row('echo $(( $# + $? + ${#x} + RANDOM ))', 'low', 'read-only inspection'),
  row('echo ${arr[x]}', 'high', 'arithmetic evaluates the value of x as code'),
  row('echo ${arr[1]} ${arr[@]} ${arr[*]} ${#arr[@]}', 'low', 'read-only inspection'),
  row('echo ${x:y:1}', 'high', 'arithmetic evaluates the value of y as code'),
  row('arr[x]=1', 'high', 'arithmetic evaluates the value of x as code'),
  row('declare -A m; m[x]=1; echo ${m[x]}', 'medium', 'declares shell variables: declare'),
  row('declare -i n; n=x', 'high', 'evaluates the value assigned to an integer variable as arithmetic: n'),
  row('declare -i n; n=5', 'medium', 'declares shell variables: declare'),
  row("read n <<< 'a[$(touch z)]'; echo $((n))", 'high', 'arithmetic evaluates the value of n as code'),
  row('read -r n < README.md; (( n > 0 ))', 'high', 'arithmetic evaluates the value of n as code'),
  row('[[ -v x ]]', 'low', 'read-only inspection'),
  row('[[ -v a[1] ]]', 'low', 'read-only inspection'),
  row('[[ -v a[x] ]]', 'high', 'arithmetic evaluates a subscript as code: a[x]'),
  row("[[ -v 'a[$(id)]' ]]", 'high', 'arithmetic evaluates a subscript as code'),
  row('n=3; echo $((n * 2))', 'medium', 'sets a shell variable: n'),
  row('n=abc; echo $((n * 2))', 'high', 'arithmetic evaluates the value of n as code'),
  row('for i in 1 2 3; do echo $((i * 2)); done', 'low', 'read-only inspection'),
  row('for i in {1..5}; do echo $((i * 2)); done', 'low', 'read-only inspection'),
  row('for i in $(seq 3); do echo $((i * 2)); done', 'high', 'arithmetic evaluates the value of i as code'),
  row('for ((i = 0; i < 3; i++)); do echo $((i)); done', 'low', 'read-only inspection'),
  row('i=0; while [ $i -lt 3 ]; do i=$((i + 1)); done', 'medium', 'sets a shell variable: i'),
  // The second pass of the loop reads what the first one assigned.
  row('i=0; while true; do echo $((i)); i=$x; done', 'high', 'arithmetic evaluates the value of i as code'),
]);

riskTable('indirect and prompt expansion', [
  row('echo ${!x}', 'high', 'indirect expansion evaluates a value as code: ${!x}'),
  row('echo "${!x}"', 'high', 'indirect expansion evaluates a value as code'),
  row('echo ${!prefix*} ${!arr[@]}', 'low', 'read-only inspection'),
  row('echo ${!arr[1]}', 'high', 'indirect expansion evaluates a value as code'),
  row('echo "${x@P}"', 'high', 'prompt expansion runs code in a value: ${x@P}'),
  row('echo "${x@Q}" "${x@U}"', 'low', 'read-only inspection'),
  row('echo ${#x} ${x:-default} ${x/a/b}', 'low', 'read-only inspection'),
]);

sequenceTable('values left by earlier lines', [
  [row("x='a[$(rm -rf src)]'", 'medium', 'sets a shell variable: x'), row(': $((x))', 'high', 'arithmetic evaluates the value of x as code')],
  [row("x='a[$(rm -rf src)]'", 'medium', 'sets a shell variable: x'), row('[[ x -eq 0 ]]', 'high', 'arithmetic evaluates the value of x as code')],
  [row('n=5', 'medium', 'sets a shell variable: n'), row('echo $((n + 1))', 'low', 'read-only inspection')],
  [row('n=5', 'medium', 'sets a shell variable: n'), row('n=$y', 'medium', 'sets a shell variable: n'), row('echo $((n))', 'high', 'arithmetic evaluates the value of n as code')],
  [row('declare -i n', 'medium', 'declares shell variables: declare'), row('n=x', 'high', 'evaluates the value assigned to an integer variable as arithmetic: n')],
  [row('declare -A m', 'medium', 'declares shell variables: declare'), row('m[key]=1', 'medium', 'sets a shell variable: m')],
  [row('((n = 4))', 'low', 'arithmetic'), row('echo $((n * 2))', 'low', 'read-only inspection')],
  [row('read -r n < README.md', 'medium', 'not a known read-only command: read'), row('echo $((n))', 'high', 'arithmetic evaluates the value of n as code')],
  [row('set -- "a[$(id)]"', 'medium', 'set'), row('echo $(( $1 ))', 'high', 'arithmetic evaluates a value that cannot be known: $1')],
  [row('RANDOM=x', 'medium', 'sets a shell variable: RANDOM'), row('echo $((RANDOM))', 'high', 'arithmetic evaluates the value of RANDOM as code')],
]);

// Found by the red-team pass after typed input: the test and unset builtins evaluate an indexed
// subscript in a name operand (bash 5.2 does it even for PIPESTATUS and DIRSTACK, always there).
riskTable('names with subscripts given to builtins', [
  row("test -v 'PIPESTATUS[$(rm -r src)]'", 'high', 'arithmetic evaluates a subscript as code'),
  row('test -v "PIPESTATUS[$(rm -r src)]"', 'high', 'recursive delete: src'),
  row("[ -v 'PIPESTATUS[x]' ]", 'high', 'arithmetic evaluates a subscript as code: PIPESTATUS[x]'),
  row("unset 'DIRSTACK[$(touch p)]'", 'high', 'arithmetic evaluates a subscript as code'),
  row('test -v "$x"', 'high', 'names a variable that cannot be known'),
  row('test -v PIPESTATUS', 'low', 'read-only inspection'),
  row('[ -v arr[2] ]', 'low', 'read-only inspection'),
  row('unset arr[1]', 'medium', 'unset'),
]);

sequenceTable('integer variables assigned by expansion and builtins', [
  [row("x='a[$(touch p)]'", 'medium', 'sets a shell variable: x'), row('declare -i n', 'medium', 'declare'), row('echo ${n:=$x}', 'high', 'evaluates the value assigned to an integer variable as arithmetic: n')],
  [row('declare -i n', 'medium', 'declare'), row('read n < README.md', 'high', 'evaluates the value assigned to an integer variable as arithmetic: n')],
  [row('declare -i n', 'medium', 'declare'), row('printf -v n %s x', 'high', 'evaluates the value assigned to an integer variable as arithmetic: n')],
  [row('echo ${m:=3}', 'low', 'read-only inspection'), row('echo $((m + 1))', 'low', 'read-only inspection')],
]);
