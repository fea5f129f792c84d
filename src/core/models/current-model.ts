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

/** `GET /api/model/current`: the caller's active model (their own, else the service default) and what it can do. */
export async function getCurrentModel(store: Store, config: Config, userId: string): Promise<CurrentModel> {
  const active = await getActiveModel(store, config, userId);
  return { model: active.name, provider: active.provider, capabilities: capabilitiesFor(active.provider, active.name) };
}
