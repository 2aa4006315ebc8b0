import type { Metadata, Sharp } from 'sharp';
import { AppError } from '../errors.js';
import { IMAGE_VARIANT_WIDTHS, MAX_IMAGE_PIXELS, MAX_IMAGE_WIDTH, type ImageFormat } from '../limits.js';
import { loadedOnFirstUse } from '../load-on-use.js';

let libvipsThreads: number | null = null;
let loadedSharp: typeof import('sharp') | null = null;

/** How many threads libvips processes an image on (applied when sharp is loaded). */
export function setImageThreads(threads: number) {
  libvipsThreads = threads;
  loadedSharp?.concurrency(threads);
}

/** sharp (libvips, a large native library) is loaded by the first image, not by every start of the service. */
const loadSharp = loadedOnFirstUse(async () => {
  const { default: sharp } = await import('sharp');
  // libvips keeps a cache of decoded images and operations for reuse: a server that never
  // processes the same image twice gains nothing from it and would hold its memory.
  sharp.cache(false);
  if (libvipsThreads !== null) sharp.concurrency(libvipsThreads);
  loadedSharp = sharp;
  return sharp;
});

/** One file written by processing: the original (upright, stripped, at most 2,000 px wide) or a variant. */
export interface ImageOutput {
  path: string;
  format: ImageFormat;
  width: number;
  height: number;
  sizeBytes: number;
}

export interface ProcessedImage {
  original: ImageOutput;
  /** Narrower copies, each width in WebP and in the original's format. */
  variants: ImageOutput[];
}

export const imageTooLarge = (width: number, height: number, frames: number) =>
  new AppError(
    413,
    'IMAGE_TOO_LARGE',
    `The image is ${width} x ${height} pixels${frames > 1 ? ` x ${frames} frames` : ''}: more than the ${MAX_IMAGE_PIXELS / 1e6} megapixel limit`,
    { width, height, frames, maxPixels: MAX_IMAGE_PIXELS },
  );

export const invalidImage = (format: ImageFormat, cause?: unknown) =>
  new AppError(422, 'INVALID_IMAGE', `The file is not a readable ${format.toUpperCase()} image (damaged or cut short)`, undefined, { cause });

/** What each format is written with: quality for the web, and an encoder effort that keeps AVIF to seconds. */
function encode(pipeline: Sharp, format: ImageFormat): Sharp {
  switch (format) {
    case 'jpeg':
      return pipeline.jpeg({ quality: 82, progressive: true });
    case 'png':
      return pipeline.png({ compressionLevel: 8 });
    case 'webp':
      return pipeline.webp({ quality: 80 });
    case 'gif':
      return pipeline.gif();
    case 'avif':
      return pipeline.avif({ quality: 55, effort: 2 });
  }
}

/** The header's size, read without decoding a pixel: a decompression bomb is refused here. */
async function checkedHeader(input: string, format: ImageFormat) {
  const sharp = await loadSharp();
  let meta: Metadata;
  try {
    meta = await sharp(input, { limitInputPixels: false }).metadata();
  } catch (error) {
    throw invalidImage(format, error);
  }
  const { width, height } = meta;
  if (!width || !height) throw invalidImage(format);
  const frames = meta.pages ?? 1;
  if (width * height * frames > MAX_IMAGE_PIXELS) throw imageTooLarge(width, height, frames);
  return { frames };
}

/**
 * Processes an uploaded image (its format already sniffed): rotated by its EXIF orientation,
 * every metadata removed (sharp writes none unless asked), the original kept at most 2,000 px
 * wide and variants at 600, 1,000 and 1,600 px (those narrower than it) in WebP and its own
 * format. Animated GIF and WebP keep their frames. libvips works off the event loop on its own
 * threads; `outputPath` names each file written (the caller stores or removes them).
 */
export async function processImage(input: string, format: ImageFormat, outputPath: (label: string) => string): Promise<ProcessedImage> {
  const { frames } = await checkedHeader(input, format);
  const sharp = await loadSharp();
  const animated = frames > 1 && (format === 'gif' || format === 'webp');
  const source = () => sharp(input, { animated, limitInputPixels: MAX_IMAGE_PIXELS, failOn: 'warning' }).rotate();
  const write = async (pipeline: Sharp, as: ImageFormat, label: string): Promise<ImageOutput> => {
    const path = outputPath(label);
    const info = await encode(pipeline, as).toFile(path);
    // An animation's height is its frames' stacked; a page is what a reader sees.
    const height = animated ? (info.pageHeight ?? info.height) : info.height;
    return { path, format: as, width: info.width, height, sizeBytes: info.size };
  };
  try {
    // A still image is decoded once, upright and at most 2,000 px wide; every file is made from those pixels.
    let upright = () => source().resize({ width: MAX_IMAGE_WIDTH, withoutEnlargement: true });
    if (!animated) {
      const { data, info } = await upright().raw().toBuffer({ resolveWithObject: true });
      upright = () => sharp(data, { raw: { width: info.width, height: info.height, channels: info.channels } });
    }
    const original = await write(upright(), format, 'original');
    const variants: ImageOutput[] = [];
    const formats = format === 'webp' ? (['webp'] as const) : (['webp', format] as const);
    for (const width of IMAGE_VARIANT_WIDTHS.filter((w) => w < original.width)) {
      for (const as of formats) variants.push(await write(upright().resize({ width }), as, `${width}.${as}`));
    }
    return { original, variants };
  } catch (error) {
    if (error instanceof AppError) throw error;
    throw invalidImage(format, error);
  }
}
