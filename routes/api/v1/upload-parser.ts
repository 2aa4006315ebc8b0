import multipart from '@fastify/multipart';
import type { FastifyInstance } from 'fastify';
import { AppError } from '../../../src/errors.js';

/** The multipart parser (busboy) reports a malformed body as a plain Error, without a code. */
const isMultipartSyntaxError = (error: unknown): error is Error =>
  error instanceof Error && !(error instanceof AppError) && (error as { code?: unknown }).code === undefined && /multipart|boundary|part/i.test(error.message);

/** The multipart parser of an upload route: one file part of at most `fileSize` bytes, a few small fields. */
export function registerUploadParser(app: FastifyInstance, fileSize: number) {
  return app.register(multipart, { limits: { fileSize, files: 1, fields: 10, parts: 12, fieldSize: 1024 } });
}

/** Runs an upload, a malformed multipart body answered as 400 BAD_REQUEST. */
export function readingUpload<T>(upload: Promise<T>): Promise<T> {
  return upload.catch((error: unknown) => {
    throw isMultipartSyntaxError(error) ? new AppError(400, 'BAD_REQUEST', `Malformed multipart body: ${error.message}`) : error;
  });
}
