import { Body, Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import {
  ApiBody,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiTags,
} from '@nestjs/swagger';
import { AdminAuth } from '../auth/admin.guard.js';
import { ApiProblems, JSON_BODY_PROBLEMS } from '../http/problem-details.js';
import {
  CreatedSiteView,
  CreateSiteDto,
  IssuedKeyView,
  KeyView,
  RotateKeyDto,
  SiteView,
} from './sites.dto.js';
import { SitesService } from './sites.service.js';

@ApiTags('sites')
@AdminAuth()
@Controller('v1/sites')
export class SitesController {
  constructor(private readonly sites: SitesService) {}

  @Post()
  @ApiCreatedResponse({
    type: CreatedSiteView,
    description: 'The site and its first client key (shown once).',
  })
  @ApiProblems(JSON_BODY_PROBLEMS, { 409: 'A site with this id exists.' })
  create(@Body() body: CreateSiteDto): Promise<CreatedSiteView> {
    return this.sites.create(body.name, body.id);
  }

  @Get()
  @ApiOkResponse({ type: [SiteView] })
  list(): Promise<SiteView[]> {
    return this.sites.list();
  }

  @Get(':siteId')
  @ApiOkResponse({ type: SiteView })
  @ApiProblems({ 404: 'No such site.' })
  get(@Param('siteId') siteId: string): Promise<SiteView> {
    return this.sites.get(siteId);
  }

  @Get(':siteId/keys')
  @ApiOkResponse({ type: [KeyView], description: 'Key ids and their state; never the keys.' })
  @ApiProblems({ 404: 'No such site.' })
  keys(@Param('siteId') siteId: string): Promise<KeyView[]> {
    return this.sites.listKeys(siteId);
  }

  @Post(':siteId/keys/rotate')
  // The body is optional: without one, every existing key is revoked.
  @ApiBody({ type: RotateKeyDto, required: false })
  @ApiCreatedResponse({ type: IssuedKeyView, description: 'The new key (shown once).' })
  @ApiProblems(JSON_BODY_PROBLEMS, { 404: 'No such site.' })
  rotate(@Param('siteId') siteId: string, @Body() body?: RotateKeyDto): Promise<IssuedKeyView> {
    return this.sites.rotateKey(siteId, body?.revokeExisting ?? true);
  }

  @Delete(':siteId/keys/:keyId')
  @HttpCode(204)
  @ApiNoContentResponse({ description: 'The key is revoked; polls held with it are answered.' })
  @ApiProblems({ 404: 'No such site, or no live key with this id.' })
  async revoke(@Param('siteId') siteId: string, @Param('keyId') keyId: string): Promise<void> {
    await this.sites.revokeKey(siteId, keyId);
  }
}
