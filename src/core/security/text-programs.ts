import type { Argument, CommandRule, Invocation } from './command-invocation.js';
import { hasOption, optionValues, parseOptions } from './command-options.js';
import { checkRead, checkWrite } from './path-access.js';
import { scanAwkProgram } from './awk-program.js';
import { scanSedProgram } from './sed-program.js';
import { literalValue } from './shell-words.js';

function fileArgument(text: string): Argument {
  return { text, value: literalValue(text), remote: false };
}

/** Programs given as text are scanned; one given as a file cannot be, so it is treated as running commands. */
function programText(invocation: Invocation, program: Argument | undefined, label: string): string | null {
  if (program === undefined) return null;
  if (program.value.kind !== 'literal') {
    invocation.engine.report('high', `${label} program cannot be analysed: ${program.text}`);
    return null;
  }
  return program.value.text;
}

const awk: CommandRule = (invocation) => {
  const { engine, name } = invocation;
  const parsed = parseOptions(invocation.args, {
    valued: 'FvfeiElW', attached: 'dDopL',
    valuedLong: ['--field-separator', '--assign', '--file', '--source', '--include', '--load', '--exec'],
  });
  // gawk --sandbox disables system(), pipes and redirections.
  const sandboxed = hasOption(parsed, '-S', '--sandbox');
  const files = optionValues(parsed, '-f', '--file', '-E', '--exec', '-i', '--include', '-l', '--load');
  const sources = optionValues(parsed, '-e', '--source');
  let readOnly = true;
  for (const file of files) {
    checkRead(invocation, file);
    if (!sandboxed) engine.report('high', `awk program file cannot be analysed: ${file.text}`);
    readOnly = false;
  }
  for (const output of optionValues(parsed, '-o', '--pretty-print', '-p', '--profile', '-d', '--dump-variables')) {
    checkWrite(invocation, output);
    readOnly = false;
  }
  const programs = files.length > 0 || sources.length > 0 ? sources : parsed.operands.slice(0, 1);
  const operands = files.length > 0 || sources.length > 0 ? parsed.operands : parsed.operands.slice(1);
  for (const program of programs) {
    const text = programText(invocation, program, 'awk');
    if (text === null) {
      readOnly = false;
      continue;
    }
    const effects = scanAwkProgram(text);
    if (sandboxed) continue;
    if (effects.runs) engine.report('high', `awk/sed program runs commands: ${name}`);
    if (effects.unknown) engine.report('high', `awk program reads or writes files it names at run time: ${name}`);
    if (effects.network) engine.report('high', `opens a network connection: ${name} /inet`);
    for (const file of effects.writes) checkWrite(invocation, fileArgument(file));
    for (const file of effects.reads) checkRead(invocation, fileArgument(file));
    if (effects.runs || effects.unknown || effects.network || effects.writes.length > 0) readOnly = false;
  }
  // `var=value` operands are assignments, not files.
  for (const operand of operands) {
    if (operand.value.kind === 'literal' && /^[A-Za-z_][A-Za-z0-9_]*=/.test(operand.value.text)) continue;
    checkRead(invocation, operand);
  }
  if (readOnly) engine.report('low', 'read-only inspection');
  return undefined;
};

const sed: CommandRule = (invocation) => {
  const { engine, name } = invocation;
  const parsed = parseOptions(invocation.args, {
    valued: 'efl', attached: 'i',
    valuedLong: ['--expression', '--file', '--line-length'],
  });
  const inPlace = hasOption(parsed, '-i', '--in-place');
  const sandboxed = hasOption(parsed, '--sandbox');
  const files = optionValues(parsed, '-f', '--file');
  const expressions = optionValues(parsed, '-e', '--expression');
  let readOnly = !inPlace;
  for (const file of files) {
    checkRead(invocation, file);
    if (!sandboxed) engine.report('high', `sed program file cannot be analysed: ${file.text}`);
    readOnly = false;
  }
  const given = files.length > 0 || expressions.length > 0;
  const programs = given ? expressions : parsed.operands.slice(0, 1);
  for (const program of programs) {
    const text = programText(invocation, program, 'sed');
    if (text === null) {
      readOnly = false;
      continue;
    }
    const effects = scanSedProgram(text);
    if (sandboxed) continue;
    if (effects.runs) engine.report('high', `awk/sed program runs commands: ${name}`);
    if (effects.unknown) engine.report('high', `sed program cannot be analysed: ${program.text}`);
    for (const file of effects.writes) checkWrite(invocation, fileArgument(file));
    for (const file of effects.reads) checkRead(invocation, fileArgument(file));
    if (effects.runs || effects.unknown || effects.writes.length > 0) readOnly = false;
  }
  for (const operand of given ? parsed.operands : parsed.operands.slice(1)) {
    if (inPlace) checkWrite(invocation, operand);
    else checkRead(invocation, operand);
  }
  if (readOnly) engine.report('low', 'read-only inspection');
  return undefined;
};

export const textProgramRules: ReadonlyMap<string, CommandRule> = new Map([
  ['awk', awk], ['gawk', awk], ['mawk', awk], ['nawk', awk], ['sed', sed], ['gsed', sed],
]);
