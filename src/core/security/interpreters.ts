import type { CommandRule } from './command-invocation.js';
import { hasOption, optionValues, parseOptions, textOf, type ParsedCommand } from './command-options.js';
import { interactiveReason, reportHiddenCode, runCodeArgument, runScriptOperand, runStdinProgram } from './code-strings.js';
import { checkRead } from './path-access.js';
import { plainText } from './shell-words.js';
import { stopFollowing } from './state-changes.js';

/**
 * sh, bash, zsh, …: `-c CODE` (also inside a cluster like `-lc`) runs CODE, `-s` or no operand
 * reads the program from stdin, otherwise the first operand is a script file.
 */
const shell: CommandRule = (invocation) => {
  const { args, name } = invocation;
  let commandMode = false;
  let stdinMode = false;
  let index = 0;
  for (; index < args.length; index += 1) {
    const text = textOf(args[index]);
    if (text === null) break;
    if (text === '--' || text === '-') {
      index += 1;
      stdinMode ||= text === '-';
      break;
    }
    if (text === '--rcfile' || text === '--init-file') {
      const file = args[index + 1];
      if (file !== undefined) checkRead(invocation, file);
      index += 1;
    } else if (/^[-+][A-Za-z]+$/.test(text)) {
      const letters = text.slice(1);
      commandMode ||= letters.includes('c');
      stdinMode ||= letters.includes('s');
      if (/[oO]/.test(letters)) index += 1;
    } else if (!text.startsWith('--')) {
      break;
    }
  }
  const operands = args.slice(index);
  const [first] = operands;
  if (commandMode) {
    if (first === undefined) {
      invocation.engine.report('high', `runs code that cannot be analysed: ${name} -c`);
      return undefined;
    }
    return runCodeArgument(invocation, first, `${name} -c`);
  }
  if (stdinMode || first === undefined) return runStdinProgram(invocation, name, true);
  return runScriptOperand(invocation, first, name);
};

interface InterpreterSpec {
  /** Options whose value is program text. */
  readonly inline: readonly string[];
  readonly valued?: string;
  readonly attached?: string;
  readonly valuedLong?: readonly string[];
  /** Options that run a named module instead of a script (`python -m`). */
  readonly module?: readonly string[];
  /** Options that only print information (`node -v`). */
  readonly info?: readonly string[];
  /** Options that go on reading code from the terminal after the script (`python -i`). */
  readonly interactive?: readonly string[];
  /** Modules that read code from the terminal (`python -m pdb`, `-m code`). */
  readonly interactiveModules?: readonly string[];
  /**
   * Modules known to run nothing but the workspace's own code or tools (`pip`, `pytest`); any
   * other may run code given in its arguments (`python -m timeit "os.system(…)"`, CONTRACT §11).
   */
  readonly knownModules?: readonly string[];
  /** Options, or `option=value` pairs, that start a debugger reading the terminal (`perl -d`, `ruby -rdebug`). */
  readonly debugger?: readonly string[];
  /** A first operand that is a debugger, not a script (`node inspect app.js`). */
  readonly debuggerOperand?: string;
}

/** Whether the interpreter will take code typed at the terminal, which is never analysed. */
function readsTypedCode(spec: InterpreterSpec, invocation: Parameters<CommandRule>[0], parsed: ParsedCommand): boolean {
  if (spec.interactive !== undefined && hasOption(parsed, ...spec.interactive) && invocation.stdin.kind === 'terminal') return true;
  if (spec.interactiveModules?.some((name) => optionValues(parsed, ...(spec.module ?? [])).some((value) => textOf(value) === name)) === true) return true;
  for (const entry of spec.debugger ?? []) {
    const [option = '', value] = entry.split('=');
    if (value === undefined ? hasOption(parsed, option) : optionValues(parsed, option).some((given) => textOf(given) === value)) return true;
  }
  return spec.debuggerOperand !== undefined && textOf(invocation.args[parsed.rest]) === spec.debuggerOperand;
}

/** python, perl, ruby, node, …: inline code is high (it cannot be analysed); a script is medium. */
function interpreter(spec: InterpreterSpec): CommandRule {
  return (invocation) => {
    const { engine, name } = invocation;
    const parsed = parseOptions(invocation.args, {
      valued: spec.valued ?? '', attached: spec.attached ?? '', valuedLong: spec.valuedLong ?? [], stopAtOperand: true,
    });
    const inline = spec.inline.find((option) => hasOption(parsed, option));
    if (inline !== undefined) {
      engine.report('high', `runs inline interpreter code: ${name} ${inline}`);
      return undefined;
    }
    if (readsTypedCode(spec, invocation, parsed)) engine.report('high', interactiveReason(name));
    if (spec.module !== undefined && hasOption(parsed, ...spec.module)) {
      const modules = optionValues(parsed, ...spec.module).map(textOf);
      const unknown = modules.filter((module) => module === null || !(spec.knownModules ?? []).includes(module.split('.')[0] ?? module));
      if (unknown.length > 0) engine.report('high', `runs a module that may run code from its arguments: ${name} -m ${unknown.map((module) => module ?? '?').join(' ')}`);
      else engine.report('medium', `runs a module: ${name}`);
      return undefined;
    }
    const script = invocation.args[parsed.rest];
    if (script !== undefined) {
      return textOf(script) === '-' ? runStdinProgram(invocation, name, false) : runScriptOperand(invocation, script, name);
    }
    if (spec.info !== undefined && hasOption(parsed, ...spec.info)) {
      engine.report('medium', `not a known read-only command: ${name}`);
      return undefined;
    }
    return runStdinProgram(invocation, name, false);
  };
}

const python = interpreter({
  inline: ['-c'], valued: 'cmWX', valuedLong: ['--check-hash-based-pycs'], module: ['-m'], info: ['-V', '--version', '-h', '--help'], interactive: ['-i'],
  interactiveModules: ['code', 'pdb', 'idlelib', 'asyncio', 'IPython', 'ptpython', 'bpython'],
  knownModules: ['pip', 'venv', 'virtualenv', 'ensurepip', 'pytest', 'unittest', 'build', 'compileall', 'py_compile', 'mypy', 'black', 'ruff', 'flake8', 'pylint', 'isort', 'coverage', 'tox', 'http', 'json', 'pydoc'],
});
const perl = interpreter({ inline: ['-e', '-E'], valued: 'eEIMm', attached: 'xil0CdDFV', info: ['-v', '--version', '-h'], debugger: ['-d'] });
const ruby = interpreter({ inline: ['-e'], valued: 'eIrCEF', attached: 'WTKx', info: ['-v', '--version', '-h', '--help'], debugger: ['-r=debug'] });
const node = interpreter({
  inline: ['-e', '--eval', '-p', '--print'],
  valued: 'epr',
  valuedLong: ['--eval', '--print', '--require', '--import', '--loader', '--experimental-loader', '--input-type', '--title', '--conditions'],
  info: ['-v', '--version', '-h', '--help'],
  interactive: ['-i', '--interactive'],
  debuggerOperand: 'inspect',
});
const php = interpreter({ inline: ['-r', '-B', '-R', '-E'], valued: 'rBREFfcdz', info: ['-v', '--version', '-h', '-i', '-m'] });
const lua = interpreter({ inline: ['-e'], valued: 'el', info: ['-v'] });
const withEval = interpreter({ inline: ['-e', '--eval', '-E', '--print', '-p'], valued: 'eEp', info: ['-v', '--version', '-h', '--help'] });

/** eval re-parses its arguments joined by spaces, in the current shell (a `cd` in it sticks). */
const evalRule: CommandRule = (invocation) => {
  if (invocation.args.length === 0) return undefined;
  const texts = invocation.args.map((argument) => plainText(argument.value));
  if (texts.some((text) => text === null)) {
    reportHiddenCode(invocation, invocation.args.some((argument) => argument.remote), 'eval');
    // Whatever it ran changed the shell in ways not seen here (CONTRACT §11).
    stopFollowing(invocation.engine, invocation.scope, 'eval of text that cannot be known');
    return undefined;
  }
  return invocation.engine.runScript(texts.join(' '), invocation.scope, invocation.stdin);
};

const source: CommandRule = (invocation) => {
  const operands = invocation.args.filter((argument) => textOf(argument) !== '--');
  const [script] = operands;
  if (script === undefined) {
    invocation.engine.report('medium', `not a known read-only command: ${invocation.name}`);
    return undefined;
  }
  // Unlike `bash script.sh`, a sourced script runs in the terminal's own shell: it can redefine
  // what the shell relies on to read only the service's commands (its prompt function, `builtin`).
  invocation.engine.report('high', `runs a script inside the terminal's own shell: ${invocation.name} ${script.text}`);
  // What the file defines stays in the shell, and this analysis never read it (CONTRACT §11).
  stopFollowing(invocation.engine, invocation.scope, `${invocation.name} ${script.text}`);
  return runScriptOperand(invocation, script, invocation.name);
};

export const shellNames: readonly string[] = ['sh', 'bash', 'zsh', 'dash', 'ksh', 'mksh', 'ash', 'yash', 'posh', 'fish', 'csh', 'tcsh', 'rbash'];

export const interpreterRules: ReadonlyMap<string, CommandRule> = new Map<string, CommandRule>([
  ...shellNames.map((name): [string, CommandRule] => [name, shell]),
  ...['python', 'python2', 'python3', 'pypy', 'pypy3', 'python3.8', 'python3.9', 'python3.10', 'python3.11', 'python3.12', 'python3.13']
    .map((name): [string, CommandRule] => [name, python]),
  ['perl', perl], ['ruby', ruby], ['node', node], ['nodejs', node], ['php', php], ['lua', lua], ['luajit', lua],
  ['Rscript', withEval], ['julia', withEval], ['osascript', withEval], ['ts-node', node], ['tsx', node], ['groovy', withEval],
  ['eval', evalRule], ['source', source], ['.', source],
]);
