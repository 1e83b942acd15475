/**
 * The dashboard's page: `index.html` for `/ui/` and every path below it (the app routes in the
 * browser), with the security headers; `/` redirects there. Its hashed assets are served by
 * `main.ts` from the same folder (`express.static`). Not part of the API, so not in the OpenAPI document.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  BadRequestException,
  Body,
  Controller,
  Get,
  Header,
  HttpCode,
  NotFoundException,
  Param,
  Post,
  Redirect,
  Res,
  ServiceUnavailableException,
} from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { CspReports } from './csp-reports.js';
import {
  CSP_REPORT_PATH,
  DASHBOARD_PATH,
  dashboardDist,
  PAGE_CACHE,
  SECURITY_HEADERS,
} from './dashboard-assets.js';

@ApiExcludeController()
@Controller()
export class DashboardController {
  private readonly dist = dashboardDist();

  constructor(private readonly reports: CspReports) {}

  @Get()
  @Redirect(`${DASHBOARD_PATH}/`, 302)
  root(): void {}

  /** Where browsers send the page's policy violations (`report-uri`). */
  @Post(CSP_REPORT_PATH.slice(1))
  @HttpCode(204)
  report(@Body() body: unknown): void {
    if (!this.reports.record(body)) throw new BadRequestException('not a CSP violation report');
  }

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
