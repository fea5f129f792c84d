export { startFakeAnthropic, anthropicError } from './fake-anthropic.js';
export { startFakeOllama, ollamaError, type FakeOllama } from './fake-ollama.js';
export { startFakeOpenAI, openAIError } from './fake-openai.js';
export type { FakeProvider, RecordedRequest } from './fake-server.js';
export type { Script, ToolCallScript, Usage } from './scripts.js';
