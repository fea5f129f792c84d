import { z } from 'zod';
import type { ProcedureMeta } from '../meta.js';
import { idParam } from '../schemas/common.js';
import { riskLevelSchema } from '../schemas/terminal.js';

/**
 * No REST path (the specification has none): WebSocket viewers send `{type:"input"}` frames,
 * typed clients call it at /trpc. Its rate group is the general one, not the terminal's 30 a
 * minute: a terminal client sends a call for each keystroke.
 */
export const sendTerminalInputMeta = {} satisfies ProcedureMeta;

/**
 * Keystrokes as text. While a shell or an interpreter reads the terminal, only printable text,
 * Enter (CR), Ctrl-C (`\u0003`) and Ctrl-D (`\u0004`) are taken (CONTRACT §11); other programs
 * get control characters and escape sequences too.
 */
export const sendTerminalInputInput = z.object({ terminalId: idParam, data: z.string().min(1).max(64 * 1024) });

/** `held`: lines typed into a shell or interpreter that wait for confirmation, as an execute's 202 would. */
export const sendTerminalInputOutput = z.object({
  success: z.boolean(),
  held: z.array(z.object({ commandId: z.string(), command: z.string(), risk: riskLevelSchema, reasons: z.array(z.string()) })),
});
