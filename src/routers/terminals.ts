import { createTerminalProcedure } from '../procedures/terminals/create-terminal.js';
import { deleteTerminalProcedure } from '../procedures/terminals/delete-terminal.js';
import { executeCommandProcedure } from '../procedures/terminals/execute-command.js';
import { getTerminalOutputProcedure } from '../procedures/terminals/get-terminal-output.js';
import { getTerminalProcedure } from '../procedures/terminals/get-terminal.js';
import { interruptTerminalProcedure } from '../procedures/terminals/interrupt-terminal.js';
import { listTerminalsProcedure } from '../procedures/terminals/list-terminals.js';
import { sendTerminalInputProcedure } from '../procedures/terminals/send-terminal-input.js';
import { router } from '../procedures/trpc.js';

export const terminalsRouter = router({
  create: createTerminalProcedure,
  list: listTerminalsProcedure,
  get: getTerminalProcedure,
  delete: deleteTerminalProcedure,
  execute: executeCommandProcedure,
  interrupt: interruptTerminalProcedure,
  input: sendTerminalInputProcedure,
  output: getTerminalOutputProcedure,
});
