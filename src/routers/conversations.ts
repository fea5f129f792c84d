import { deleteConversationProcedure } from '../procedures/conversations/delete-conversation.js';
import { getConversationProcedure } from '../procedures/conversations/get-conversation.js';
import { getCurrentConversationProcedure } from '../procedures/conversations/get-current-conversation.js';
import { listConversationsProcedure } from '../procedures/conversations/list-conversations.js';
import { loadConversationProcedure } from '../procedures/conversations/load-conversation.js';
import { renameConversationProcedure } from '../procedures/conversations/rename-conversation.js';
import { saveConversationProcedure } from '../procedures/conversations/save-conversation.js';
import { setCurrentConversationProcedure } from '../procedures/conversations/set-current-conversation.js';
import { router } from '../procedures/trpc.js';

export const conversationsRouter = router({
  list: listConversationsProcedure,
  current: getCurrentConversationProcedure,
  get: getConversationProcedure,
  load: loadConversationProcedure,
  save: saveConversationProcedure,
  rename: renameConversationProcedure,
  setCurrent: setCurrentConversationProcedure,
  delete: deleteConversationProcedure,
});
