// What the fuzzer reads from the service's OpenAPI document: each operation with its parameters
// and JSON body schema.

export interface Schema {
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  minItems?: number;
  maxItems?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  enum?: unknown[];
  anyOf?: Schema[];
  additionalProperties?: Schema | boolean;
  propertyNames?: Schema;
  default?: unknown;
}

interface Parameter {
  name: string;
  in: 'path' | 'query';
  required: boolean;
  schema: Schema;
}

export interface Operation {
  method: string;
  template: string;
  /** `POST /api/conversation/{id}/rename`, as the coverage count and the labels name it. */
  name: string;
  pathParams: Parameter[];
  queryParams: Parameter[];
  /** The JSON request body's schema; absent when the operation documents no body. */
  body: Schema | undefined;
  /** Every method the document lists for this path: a "wrong method" must be none of them. */
  pathMethods: ReadonlySet<string>;
}

/** Every operation of the document, with its parameters and JSON body schema. */
export function operationsOf(document: { paths: Record<string, Record<string, any>> }): Operation[] {
  const operations: Operation[] = [];
  for (const [template, item] of Object.entries(document.paths)) {
    const pathMethods = new Set(Object.keys(item).map((method) => method.toUpperCase()));
    for (const [method, operation] of Object.entries(item)) {
      const parameters = (operation.parameters ?? []) as Parameter[];
      operations.push({
        method: method.toUpperCase(),
        template,
        name: `${method.toUpperCase()} ${template}`,
        pathParams: parameters.filter((parameter) => parameter.in === 'path'),
        queryParams: parameters.filter((parameter) => parameter.in === 'query'),
        body: operation.requestBody?.content?.['application/json']?.schema as Schema | undefined,
        pathMethods,
      });
    }
  }
  return operations;
}

export function types(schema: Schema): string[] {
  if (schema.type === undefined) return [];
  return Array.isArray(schema.type) ? schema.type : [schema.type];
}
