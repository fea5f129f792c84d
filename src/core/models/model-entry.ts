import type { ProviderName } from '../config/env-schema.js';
import { capabilitiesFor, type ModelCapabilities } from './model-capabilities.js';

/** CONTRACT §3's model `status` values. */
export const modelStatuses = ['available', 'downloading', 'not_downloaded', 'unavailable'] as const;
export type ModelStatus = (typeof modelStatuses)[number];

export interface DownloadProgress {
  completed: number;
  total: number;
}

/** One entry of a model list (`GET /api/models`, `GET /api/<provider>/models`). */
export interface ModelEntry {
  name: string;
  status: ModelStatus;
  provider: ProviderName;
  capabilities: ModelCapabilities;
  /** While `downloading`. */
  progress?: DownloadProgress;
  /** Why the last download of this model failed, kept visible for a while after it did. */
  error?: string;
  /**
   * Why an `unavailable` model is: `needs apiKey` for a hosted model the server holds no key
   * for, which a caller can still use by sending its own.
   */
  reason?: ModelUnavailableReason;
}

export const modelUnavailableReasons = ['needs apiKey'] as const;
export type ModelUnavailableReason = (typeof modelUnavailableReasons)[number];

export function modelEntry(
  provider: ProviderName,
  name: string,
  status: ModelStatus,
  extra: Pick<ModelEntry, 'progress' | 'error' | 'reason'> = {},
): ModelEntry {
  return { name, status, provider, capabilities: capabilitiesFor(provider, name), ...extra };
}
