/**
 * The dashboard's page: `index.html` for `/ui/` and every path below it (the app routes in the
 * browser), with the security headers; `/` redirects there. Its hashed assets are served by
 * `main.ts` from the same folder (`express.static`). Not part of the API, so not in the OpenAPI document.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  Controller,
  Get,
  Header,
  NotFoundException,
  Param,
  Redirect,
  Res,
  ServiceUnavailableException,
} from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { DASHBOARD_PATH, dashboardDist, PAGE_CACHE, SECURITY_HEADERS } from './dashboard-assets.js';

@ApiExcludeController()
@Controller()
export class DashboardController {
  private readonly dist = dashboardDist();

  @Get()
  @Redirect(`${DASHBOARD_PATH}/`, 302)
  root(): void {}

  @Get(['ui', 'ui/{*path}'])
  @Header('Cache-Control', PAGE_CACHE)
  async page(
    @Param('path') path: string[] | undefined,
    @Res({ passthrough: true }) response: Response,
  ): Promise<string> {
    // A missing asset is a 404, not the page (a script tag would get HTML).
    if (path?.[0] === 'assets') throw new NotFoundException('no such dashboard asset');
    if (!this.dist) {
      throw new ServiceUnavailableException(
        'the dashboard is not built: run `npm run build` (or `npm run dev`)',
      );
    }
    response.set(SECURITY_HEADERS).type('html');
    // Read per request: `npm run dev` rebuilds it with new asset names while the hub runs.
    return readFile(join(this.dist, 'index.html'), 'utf8');
  }
}
