import type { Config, GeneratorMode } from '../config.js';
import { normalizeModelName } from '../ollama-models.js';
import { BuiltinGenerator } from './builtin/index.js';
import { BuiltinWorkerPool } from './builtin/pool.js';
import { GeneratorUnavailableError, UnknownModelError } from './errors.js';
import { OllamaGenerator } from './ollama.js';
import type { GenerationRequest, GenerationResult, Generator, ProviderName } from './types.js';

export type GeneratorConfig = Pick<Config, 'generator' | 'ollamaHost' | 'ollamaModel' | 'generationTimeoutMs'> & Partial<Pick<Config, 'builtinWorkers'>>;

/** The part of a pino logger the service uses. */
export interface GeneratorLogger {
  warn(obj: object | string, msg?: string): void;
  info(obj: object | string, msg?: string): void;
}

export interface GeneratorServiceOptions {
  /** Clock for the model-list cache; injectable so tests need no sleeps. */
  now?: () => number;
  modelListTtlMs?: number;
}

export interface GeneratorStatus {
  mode: GeneratorMode;
  active: ProviderName;
  ollama: { host: string; model: string; reachable: boolean; modelAvailable: boolean };
}

/** The generator the app writes posts with, and how it reports itself to /ready. */
export interface AppGenerator extends Pick<Generator, 'generate'> {
  status(): Promise<GeneratorStatus>;
  /** Refuses (UnknownModelError) a model the generator answers it does not have; an unreachable one is given the benefit of the doubt. */
  checkModel?(model: string): Promise<void>;
  /** Stops what the generator started (the composer's threads). */
  close?(): Promise<void>;
}

/** How long Ollama's model list is trusted before it is asked again. */
export const MODEL_LIST_TTL_MS = 30_000;

/** The name a request uses to ask for the offline composer. */
export const BUILTIN_MODEL_ALIAS = 'builtin';

function hasModel(installed: readonly string[], model: string): boolean {
  const wanted = normalizeModelName(model);
  return installed.some((name) => normalizeModelName(name) === wanted);
}

type OllamaProbe =
  | { reachable: true; models: string[] }
  | { reachable: false; error: GeneratorUnavailableError };

/**
 * Chooses the generator for each request according to GENERATOR:
 * - builtin: the offline composer only;
 * - ollama: Ollama only, its failures surface as 503/504;
 * - auto: Ollama while it answers and has the model, the composer otherwise (warned about once).
 */
export class GeneratorService implements AppGenerator {
  private readonly builtin: BuiltinGenerator | BuiltinWorkerPool;
  private readonly ollama: OllamaGenerator;
  private readonly now: () => number;
  private readonly modelListTtlMs: number;
  private probe: { at: number; result: Promise<OllamaProbe> } | null = null;
  /** Auto mode is currently falling back; the warning is logged on entering this state only. */
  private fallingBack = false;

  constructor(
    private readonly config: GeneratorConfig,
    private readonly log: GeneratorLogger,
    options: GeneratorServiceOptions = {},
  ) {
    this.builtin = config.builtinWorkers ? new BuiltinWorkerPool(config.builtinWorkers) : new BuiltinGenerator();
    this.ollama = new OllamaGenerator({
      host: config.ollamaHost,
      model: config.ollamaModel,
      timeoutMs: config.generationTimeoutMs,
    });
    this.now = options.now ?? Date.now;
    this.modelListTtlMs = options.modelListTtlMs ?? MODEL_LIST_TTL_MS;
  }

  async generate(req: GenerationRequest, signal?: AbortSignal): Promise<GenerationResult> {
    const requested = req.model?.trim() || null;
    const wantsBuiltin = requested === BUILTIN_MODEL_ALIAS || requested === this.builtin.model;
    switch (this.config.generator) {
      case 'builtin':
        if (requested !== null && !wantsBuiltin) {
          throw new UnknownModelError(requested, `GENERATOR=builtin offers only "${BUILTIN_MODEL_ALIAS}"`);
        }
        return this.builtin.generate(req, signal);
      case 'ollama':
        if (requested !== null) await this.requireOllamaModel(requested, false);
        return this.ollama.generate({ ...req, model: requested }, signal);
      case 'auto':
        if (wantsBuiltin) return this.builtin.generate(req, signal);
        // Naming the configured model asks for nothing more than auto mode does: the builtin
        // composer still stands in while Ollama cannot serve it.
        if (requested !== null && normalizeModelName(requested) === normalizeModelName(this.config.ollamaModel)) return this.generateAuto(req, signal);
        if (requested !== null) {
          await this.requireOllamaModel(requested, true);
          return this.ollama.generate({ ...req, model: requested }, signal);
        }
        return this.generateAuto(req, signal);
    }
  }

  async checkModel(model: string): Promise<void> {
    const requested = model.trim();
    if (requested === BUILTIN_MODEL_ALIAS || requested === this.builtin.model) return;
    if (this.config.generator === 'builtin') throw new UnknownModelError(requested, `GENERATOR=builtin offers only "${BUILTIN_MODEL_ALIAS}"`);
    if (this.config.generator === 'auto' && normalizeModelName(requested) === normalizeModelName(this.config.ollamaModel)) return;
    try {
      await this.requireOllamaModel(requested, this.config.generator === 'auto');
    } catch (error) {
      // Down now is no proof the model is missing: the task waits for the server instead.
      if (!(error instanceof GeneratorUnavailableError)) throw error;
    }
  }

  async close(): Promise<void> {
    if (this.builtin instanceof BuiltinWorkerPool) await this.builtin.close();
  }

  async status(): Promise<GeneratorStatus> {
    const { generator: mode, ollamaHost: host, ollamaModel: model } = this.config;
    if (mode === 'builtin') {
      return { mode, active: 'builtin', ollama: { host, model, reachable: false, modelAvailable: false } };
    }
    const probe = await this.probeOllama();
    const modelAvailable = probe.reachable && hasModel(probe.models, model);
    return {
      mode,
      active: mode === 'ollama' || modelAvailable ? 'ollama' : 'builtin',
      ollama: { host, model, reachable: probe.reachable, modelAvailable },
    };
  }

  private async generateAuto(req: GenerationRequest, signal?: AbortSignal): Promise<GenerationResult> {
    const { ollamaHost: host, ollamaModel: model } = this.config;
    const probe = await this.probeOllama();
    if (!probe.reachable) return this.fallBack(probe.error, req, signal);
    if (!hasModel(probe.models, model)) return this.fallBack(GeneratorUnavailableError.modelMissing(model, host), req, signal);
    try {
      const result = await this.ollama.generate({ ...req, model: null }, signal);
      if (this.fallingBack) {
        this.fallingBack = false;
        this.log.info({ host, model }, 'Ollama is available again; generating posts with Ollama');
      }
      return result;
    } catch (err) {
      // Ollama went away (or lost the model) since the cached check: the composer still delivers.
      if (!(err instanceof GeneratorUnavailableError)) throw err;
      this.probe = null;
      return this.fallBack(err, req, signal);
    }
  }

  private fallBack(reason: GeneratorUnavailableError, req: GenerationRequest, signal?: AbortSignal): Promise<GenerationResult> {
    if (!this.fallingBack) {
      this.fallingBack = true;
      this.log.warn(
        { host: this.config.ollamaHost, model: this.config.ollamaModel, reason: reason.message },
        `Ollama is not usable (${reason.message}); generating posts with the builtin composer`,
      );
    }
    return this.builtin.generate({ ...req, model: null }, signal);
  }

  /** An explicitly requested Ollama model must be installed; otherwise the request can never succeed. */
  private async requireOllamaModel(model: string, builtinAllowed: boolean): Promise<void> {
    const probe = await this.probeOllama();
    // Whether the model exists is unknown while the server is down: a retryable 503, not a permanent 400.
    if (!probe.reachable) throw probe.error;
    if (hasModel(probe.models, model)) return;
    const installed = probe.models.length > 0 ? probe.models.join(', ') : 'none';
    const alternatives = builtinAllowed ? `; "${BUILTIN_MODEL_ALIAS}" selects the builtin composer` : '';
    throw new UnknownModelError(
      model,
      `the Ollama server at ${this.config.ollamaHost} does not have it (installed: ${installed}); install it with \`ollama pull ${model}\`${alternatives}`,
    );
  }

  /** Ollama's model list, cached for the TTL; concurrent callers share one request. */
  private probeOllama(): Promise<OllamaProbe> {
    const now = this.now();
    if (this.probe && now - this.probe.at < this.modelListTtlMs) return this.probe.result;
    const result = this.ollama.listModels().then(
      (models): OllamaProbe => ({ reachable: true, models }),
      (err: unknown): OllamaProbe => ({
        reachable: false,
        error: err instanceof GeneratorUnavailableError ? err : GeneratorUnavailableError.unreachable(this.config.ollamaHost, String(err)),
      }),
    );
    this.probe = { at: now, result };
    return result;
  }
}
