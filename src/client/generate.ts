/**
 * Tooling, not run by the service: turns the OpenAPI document into the client's TypeScript
 * types with openapi-typescript (a development dependency). Used by `npm run openapi` and by
 * the test that keeps openapi.json and src/client/schema.ts current.
 */
import fs from 'node:fs';
import path from 'node:path';
import openapiTS, { astToString, type OpenAPI3 } from 'openapi-typescript';
import ts from 'typescript';

export const DOCUMENT_FILE = 'openapi.json';
export const CLIENT_TYPES_FILE = 'src/client/schema.ts';

const HEADER = '/* Generated from openapi.json by `npm run openapi` (openapi-typescript): do not edit. */\n';

/** The document as the repository keeps it: stable key order from the app, two-space JSON. */
export const documentText = (document: object) => `${JSON.stringify(document, null, 2)}\n`;

/** The client's types for the document; uploads (`format: binary`) are Blobs. */
export async function clientTypes(document: object): Promise<string> {
  const nodes = await openapiTS(structuredClone(document) as OpenAPI3, {
    transform(schema) {
      if (schema.format === 'binary') return ts.factory.createTypeReferenceNode('Blob');
      return undefined;
    },
  });
  return HEADER + astToString(nodes);
}

/** Writes openapi.json and the client's types under `root`. */
export async function writeOpenApi(document: object, root: string): Promise<void> {
  fs.writeFileSync(path.join(root, DOCUMENT_FILE), documentText(document));
  fs.writeFileSync(path.join(root, CLIENT_TYPES_FILE), await clientTypes(document));
}
