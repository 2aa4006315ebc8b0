/**
 * Errors the core raises. Each carries the HTTP status and the stable UPPER_SNAKE code of the
 * error envelope, so the route layer never has to translate: the errors plugin renders them.
 */
export interface ErrorDetail {
  path: string;
  message: string;
}

export class AppError extends Error {
  constructor(
    readonly statusCode: number,
    readonly code: string,
    message: string,
    readonly details?: ErrorDetail[] | Record<string, unknown>,
  ) {
    super(message);
    this.name = 'AppError';
  }
}

export const notFound = (what: string) => new AppError(404, 'NOT_FOUND', `${what} not found`);

export const validationError = (message: string, details?: ErrorDetail[]) =>
  new AppError(400, 'VALIDATION_ERROR', message, details);

export const conflict = (message: string) => new AppError(409, 'CONFLICT', message);
