import { deleteModelProcedure } from '../procedures/models/delete-model.js';
import { downloadModelProcedure } from '../procedures/models/download-model.js';
import { getCurrentModelProcedure } from '../procedures/models/get-current-model.js';
import { listModelsProcedure } from '../procedures/models/list-models.js';
import { listAnthropicModelsProcedure } from '../procedures/models/list-anthropic-models.js';
import { listOllamaModelsProcedure } from '../procedures/models/list-ollama-models.js';
import { listOpenAiModelsProcedure } from '../procedures/models/list-openai-models.js';
import { setDefaultModelProcedure } from '../procedures/models/set-default-model.js';
import { switchModelProcedure } from '../procedures/models/switch-model.js';
import { router } from '../procedures/trpc.js';

export const modelsRouter = router({
  list: listModelsProcedure,
  current: getCurrentModelProcedure,
  download: downloadModelProcedure,
  switch: switchModelProcedure,
  setDefault: setDefaultModelProcedure,
  delete: deleteModelProcedure,
  listOpenai: listOpenAiModelsProcedure,
  listAnthropic: listAnthropicModelsProcedure,
  listOllama: listOllamaModelsProcedure,
});
