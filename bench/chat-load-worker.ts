// The chat benchmark's load generator, a process of its own so that the clients' parsing competes
// with neither the orchestrator nor the routes measured. Takes one LoadRequest per IPC message,
// answers each with its LoadReply; stops when the channel closes.
import { runLoad, type LoadRequest } from './chat-load.js';

process.on('message', (message: LoadRequest) => {
  void runLoad(message).then((reply) => process.send?.(reply));
});
process.once('disconnect', () => process.exit(0));
