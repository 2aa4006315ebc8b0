import type { ImageFormat } from '../limits.js';

/** Bytes enough to tell every accepted format (and SVG) from the start of a file. */
export const SNIFF_BYTES = 512;

/**
 * The image format a file's first bytes announce, whatever its name says: `svg` for SVG
 * (refused: it is a document that can carry script), null for anything else.
 */
export function sniffImage(head: Buffer): ImageFormat | 'svg' | null {
  if (head.length >= 3 && head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return 'jpeg';
  if (head.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'png';
  const ascii = head.toString('latin1', 0, Math.min(head.length, SNIFF_BYTES));
  if (ascii.startsWith('GIF87a') || ascii.startsWith('GIF89a')) return 'gif';
  if (ascii.startsWith('RIFF') && ascii.slice(8, 12) === 'WEBP') return 'webp';
  // An ISO media file whose brand (major or compatible) is AVIF's.
  if (ascii.slice(4, 8) === 'ftyp') {
    const boxSize = head.readUInt32BE(0);
    const brands = ascii.slice(8, Math.min(boxSize, head.length));
    if (/avif|avis/.test(brands)) return 'avif';
  }
  // SVG: XML or an <svg> element, after an optional byte-order mark, spaces and comments.
  const text = ascii.replace(/^\u00ef\u00bb\u00bf/, '').trimStart();
  if (/^<\?xml|^<svg[\s>]|^<!--|^<!doctype svg/i.test(text) && /<svg[\s>]/i.test(ascii)) return 'svg';
  return null;
}

/** A file extension for each format, as the stored files are named. */
export const EXTENSION_OF: Record<ImageFormat, string> = { jpeg: 'jpg', png: 'png', webp: 'webp', gif: 'gif', avif: 'avif' };

export const MEDIA_TYPE_OF: Record<ImageFormat, string> = {
  jpeg: 'image/jpeg',
  png: 'image/png',
  webp: 'image/webp',
  gif: 'image/gif',
  avif: 'image/avif',
};

/** The format of a stored file, by its extension (the public media route serves only these). */
export function formatOfFile(file: string): ImageFormat | undefined {
  const extension = file.slice(file.lastIndexOf('.') + 1);
  return (Object.keys(EXTENSION_OF) as ImageFormat[]).find((format) => EXTENSION_OF[format] === extension);
}
