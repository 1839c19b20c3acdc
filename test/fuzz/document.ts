// The operations of docs/openapi.yaml as the fuzzer needs them: parameters, security, request body, what a 201 is.
import { deref, type Schema } from './schema-arbitrary';

export interface Param {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  schema: Schema;
}

export interface Operation {
  /** "<METHOD> <template>", as the report counts it. */
  key: string;
  method: string;
  template: string;
  security: 'session' | 'bot' | 'none';
  params: Param[];
  body?: { required: boolean; contentType: string; schema: Schema };
  /** A 201 is a Message: the run checks it stays in its chat's history. */
  acksMessage: boolean;
  /** Request members the document says come back "exactly as sent". */
  echo: string[];
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

/** The parts of an OpenAPI operation the fuzzer reads. */
interface OperationObject {
  parameters?: Schema[];
  security?: Record<string, string[]>[];
  requestBody?: { required?: boolean; content?: Record<string, { schema: Schema }> };
  responses?: Record<string, { content?: Record<string, { schema?: Schema }> }>;
}
/** A path item: its operations by method, and parameters shared by them. */
type PathItem = { parameters?: Schema[] } & Record<string, unknown>;

/** The operations of `paths`, with parameters ($ref resolved, path-level ones included), security and body. */
export function readOperations(doc: Schema): Operation[] {
  return Object.entries(doc.paths as Record<string, PathItem>).flatMap(([template, item]) =>
    METHODS.filter((m) => item[m]).map((m) => {
      const op = item[m] as OperationObject;
      const params = [...(item.parameters ?? []), ...(op.parameters ?? [])].map((p) => deref(doc, p) as unknown as Param);
      const scheme = Object.keys((op.security ?? (doc.security as OperationObject['security']) ?? [])[0] ?? {})[0];
      const [contentType, media] = Object.entries(op.requestBody?.content ?? {})[0] ?? [];
      const bodySchema = media ? deref(doc, media.schema) : undefined;
      const created = op.responses?.['201']?.content?.['application/json']?.schema?.$ref;
      return {
        key: `${m.toUpperCase()} ${template}`,
        method: m.toUpperCase(),
        template,
        security: scheme === 'sessionToken' ? 'session' : scheme === 'botSecretKey' ? 'bot' : 'none',
        params,
        body: bodySchema ? { required: !!op.requestBody?.required, contentType, schema: bodySchema } : undefined,
        acksMessage: created === '#/components/schemas/Message',
        echo: Object.entries(bodySchema?.properties ?? {}).filter(([, s]) => /exactly as sent/.test(s.description ?? '')).map(([k]) => k),
      };
    }),
  );
}

