import { clearContextProcedure } from '../procedures/context/clear-context.js';
import { getContextProcedure } from '../procedures/context/get-context.js';
import { router } from '../procedures/trpc.js';

export const contextRouter = router({
  get: getContextProcedure,
  clear: clearContextProcedure,
});
