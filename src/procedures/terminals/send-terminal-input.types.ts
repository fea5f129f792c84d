import { z } from 'zod';
import type { ProcedureMeta } from '../meta.js';
import { idParam } from '../schemas/common.js';

/**
 * No REST path (the specification has none): WebSocket viewers send `{type:"input"}` frames,
 * typed clients call it at /trpc. Its rate group is the general one, not the terminal's 30 a
 * minute: a terminal client sends a call for each keystroke.
 */
export const sendTerminalInputMeta = {} satisfies ProcedureMeta;

/** Keystrokes as text: control characters (Ctrl-C is `\u0003`) and escape sequences included. */
export const sendTerminalInputInput = z.object({ terminalId: idParam, data: z.string().min(1).max(64 * 1024) });
