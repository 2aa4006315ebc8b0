import { validationError } from '../errors.js';

/** A feature image that is no image of the site: a 400 naming where it was given. */
export const unknownImage = (mediaId: string, path: string) =>
  validationError(`featureImage: no image with id ${mediaId} in the site's media library`, [{ path, message: 'must be the id of an image of the site (POST /api/v1/media)' }]);
