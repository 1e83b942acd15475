import { Injectable, type NestMiddleware, UnsupportedMediaTypeException } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';

/**
 * JSON endpoints answer 415 to a body in another media type, instead of silently seeing an empty
 * object (Express parses only what it recognises). Applied to every route but dataset uploads.
 */
@Injectable()
export class JsonContentTypeMiddleware implements NestMiddleware {
  use(request: Request, _response: Response, next: NextFunction): void {
    const hasBody =
      Number(request.headers['content-length'] ?? 0) > 0 ||
      request.headers['transfer-encoding'] !== undefined;
    if (hasBody && !request.is('application/json')) {
      throw new UnsupportedMediaTypeException('request bodies must be application/json');
    }
    next();
  }
}
