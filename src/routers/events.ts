import { followEventsProcedure } from '../procedures/events/follow-events.js';
import { router } from '../procedures/trpc.js';

export const eventsRouter = router({
  follow: followEventsProcedure,
});
