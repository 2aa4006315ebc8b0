import { AppError } from '../errors.js';

/** Ollama cannot serve the request right now; a later attempt may succeed. */
export class GeneratorUnavailableError extends AppError {
  /** A job meeting this waits for the generator without spending an attempt (see the job loop). */
  readonly unavailable = true;

  constructor(message: string) {
    super(503, 'GENERATOR_UNAVAILABLE', message);
    this.name = 'GeneratorUnavailableError';
  }

  static unreachable(host: string, cause?: string): GeneratorUnavailableError {
    const detail = cause ? ` (${cause})` : '';
    return new GeneratorUnavailableError(`The Ollama server at ${host} is unreachable${detail}`);
  }

  static modelMissing(model: string, host: string): GeneratorUnavailableError {
    return new GeneratorUnavailableError(
      `The Ollama server at ${host} does not have the model "${model}"; install it with \`ollama pull ${model}\``,
    );
  }
}

export class GenerationTimeoutError extends AppError {
  constructor(timeoutMs: number) {
    super(504, 'GENERATION_TIMEOUT', `Generation did not finish within ${timeoutMs} ms`);
    this.name = 'GenerationTimeoutError';
  }
}

/** The requested model does not exist for the configured generator; retrying cannot help. */
export class UnknownModelError extends AppError {
  readonly permanent = true;

  constructor(model: string, reason: string) {
    super(400, 'UNKNOWN_MODEL', `Unknown model "${model}": ${reason}`, { model });
    this.name = 'UnknownModelError';
  }
}

/** The model's answer is not a usable post (thrown by the parser, and by the generator after its retry). */
export class InvalidModelOutputError extends AppError {
  constructor(readonly reason: string) {
    super(502, 'GENERATION_FAILED', `The model returned an invalid post: ${reason}`);
    this.name = 'InvalidModelOutputError';
  }
}
