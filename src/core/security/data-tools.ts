import type { Argument, CommandRule, Effects } from './command-invocation.js';
import { hasOption, optionValues, parseOptions, textOf } from './command-options.js';
import { checkRead, checkWrite } from './path-access.js';

const decodes: Effects = { network: false, stdinCode: false, decoder: true };

/** jq cannot run programs; it only reads its inputs and the files named by a few options. */
const jq: CommandRule = (invocation) => {
  const args = invocation.args;
  const operands: Argument[] = [];
  let programFromFile = false;
  let valuesFollow = false;
  for (let index = 0; index < args.length; index += 1) {
    const argument = args[index];
    if (argument === undefined) break;
    const text = textOf(argument);
    if (valuesFollow && operands.length > 0) continue;
    if (text === '--args' || text === '--jsonargs') {
      valuesFollow = true;
    } else if (text === '--arg' || text === '--argjson') {
      index += 2;
    } else if (text === '--slurpfile' || text === '--rawfile') {
      const file = args[index + 2];
      if (file !== undefined) checkRead(invocation, file);
      index += 2;
    } else if (text === '-f' || text === '--from-file' || text === '-L') {
      const file = args[index + 1];
      if (file !== undefined) checkRead(invocation, file);
      programFromFile ||= text !== '-L';
      index += 1;
    } else if (text === '--indent') {
      index += 1;
    } else if (text !== null && text.startsWith('-') && text.length > 1) {
      continue;
    } else {
      operands.push(argument);
    }
  }
  for (const input of programFromFile ? operands : operands.slice(1)) checkRead(invocation, input);
  invocation.engine.report('low', 'read-only inspection');
  return undefined;
};

/** base64 and friends: medium (not on the read-only list); decoding makes a pipe into a shell worse. */
const encoder: CommandRule = (invocation) => {
  const parsed = parseOptions(invocation.args, { valued: 'w', valuedLong: ['--wrap'] });
  invocation.engine.report('medium', `not a known read-only command: ${invocation.name}`);
  for (const operand of parsed.operands) checkRead(invocation, operand);
  return hasOption(parsed, '-d', '-D', '--decode') ? decodes : undefined;
};

const openssl: CommandRule = (invocation) => {
  invocation.engine.report('medium', `not a known read-only command: ${invocation.name}`);
  const words = invocation.args.map(textOf);
  for (const [index, word] of words.entries()) {
    const file = invocation.args[index + 1];
    if (file === undefined) continue;
    if (word === '-in') checkRead(invocation, file);
    if (word === '-out') checkWrite(invocation, file);
  }
  return words.includes('-d') ? decodes : undefined;
};

/**
 * Compressors replace the files they are given unless told to write to stdout; anything that
 * decompresses is a decoder for the pipe rules.
 */
function compressor(decompresses: boolean): CommandRule {
  return (invocation) => {
    const parsed = parseOptions(invocation.args, { valued: 'S', valuedLong: ['--suffix'] });
    const toStdout = hasOption(parsed, '-c', '--stdout', '--to-stdout', '-t', '--test', '-l', '--list');
    invocation.engine.report('medium', `not a known read-only command: ${invocation.name}`);
    for (const operand of parsed.operands) {
      if (toStdout) checkRead(invocation, operand);
      else checkWrite(invocation, operand);
    }
    return decompresses || hasOption(parsed, '-d', '--decompress', '--uncompress') ? decodes : undefined;
  };
}

// uudecode writes to whatever file name the encoded data carries, which nobody can see here.
const uudecode: CommandRule = (invocation) => {
  const parsed = parseOptions(invocation.args, { valued: 'o', valuedLong: ['--output-file'] });
  for (const operand of parsed.operands) checkRead(invocation, operand);
  const outputs = optionValues(parsed, '-o', '--output-file');
  for (const output of outputs) checkWrite(invocation, output);
  if (outputs.length === 0) invocation.engine.report('high', `writes a file named in its input: ${invocation.name}`);
  return decodes;
};

/** zcat and friends only read. */
const catDecompressor: CommandRule = (invocation) => {
  const parsed = parseOptions(invocation.args);
  invocation.engine.report('medium', `not a known read-only command: ${invocation.name}`);
  for (const operand of parsed.operands) checkRead(invocation, operand);
  return decodes;
};

export const dataToolRules: ReadonlyMap<string, CommandRule> = new Map<string, CommandRule>([
  ['jq', jq],
  ['base64', encoder], ['base32', encoder], ['basenc', encoder], ['uudecode', uudecode],
  ['openssl', openssl],
  ...['gzip', 'bzip2', 'xz', 'zstd', 'lz4', 'lzma', 'compress'].map((name): [string, CommandRule] => [name, compressor(false)]),
  ...['gunzip', 'bunzip2', 'unxz', 'unzstd', 'unlzma', 'uncompress'].map((name): [string, CommandRule] => [name, compressor(true)]),
  ...['zcat', 'bzcat', 'xzcat', 'zstdcat', 'lz4cat', 'gzcat'].map((name): [string, CommandRule] => [name, catDecompressor]),
]);
