import { Type } from '@sinclair/typebox';
import { IMAGE_FORMATS, MAX_ALT_LENGTH } from '../limits.js';
import { PageQuery, PaginationSchema, SiteRef, StringEnum, Timestamp, envelope } from './common.js';

const Format = StringEnum(IMAGE_FORMATS);

/** An image of the site's media library. */
export const MediaItem = Type.Object({
  id: Type.String({ format: 'uuid' }),
  url: Type.String({ description: 'The original (upright, metadata removed, at most 2,000 px wide); immutable' }),
  name: Type.String({ description: 'The uploaded file name' }),
  format: Format,
  width: Type.Integer(),
  height: Type.Integer(),
  alt: Type.String(),
  sizeBytes: Type.Integer({ description: 'Every stored file of the image together (counted in the storage quota)' }),
  variants: Type.Array(
    Type.Object({ url: Type.String(), format: Format, width: Type.Integer(), height: Type.Integer(), sizeBytes: Type.Integer() }),
    { description: 'Narrower copies (600, 1,000 and 1,600 px wide, never wider than the original) in WebP and the original format' },
  ),
  createdAt: Timestamp,
});

export const MediaResponse = envelope(Type.Object({ message: Type.String(), media: MediaItem, site: SiteRef }));
export const MediaListResponse = envelope(Type.Object({ items: Type.Array(MediaItem), pagination: PaginationSchema, site: SiteRef }));
export const MediaDeletedResponse = envelope(Type.Object({ message: Type.String(), mediaId: Type.String(), site: SiteRef }));
export const MediaListQuery = Type.Object(PageQuery);
export const MediaPatchBody = Type.Object({ alt: Type.String({ maxLength: MAX_ALT_LENGTH }) }, { additionalProperties: false, examples: [{ alt: 'A cup of coffee on a wooden table' }] });

/** The upload's body, for the document only (the route reads the parts itself). */
export const MediaUploadBody = Type.Object({ file: Type.String({ format: 'binary', description: 'A JPEG, PNG, WebP, GIF or AVIF image, at most 20 MiB and 50 megapixels' }) }, { description: 'multipart/form-data with exactly one part, named "file"' });
