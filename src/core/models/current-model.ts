import type { Config } from '../config/load-config.js';
import type { Store } from '../db/store.js';
import type { ProviderName } from '../config/env-schema.js';
import { getActiveModel } from './active-model.js';
import { capabilitiesFor, type ModelCapabilities } from './model-capabilities.js';

export interface CurrentModel {
  model: string;
  provider: ProviderName;
  capabilities: ModelCapabilities;
}

/** `GET /api/model/current`: the shared active model and what it can do. */
export async function getCurrentModel(store: Store, config: Config): Promise<CurrentModel> {
  const active = await getActiveModel(store, config);
  return { model: active.name, provider: active.provider, capabilities: capabilitiesFor(active.provider, active.name) };
}
