import { Body, Controller, Delete, Get, HttpCode, Param, Post, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiCreatedResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { AdminGuard } from '../auth/admin.guard.js';
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
@ApiBearerAuth('admin')
@UseGuards(AdminGuard)
@Controller('v1/sites')
export class SitesController {
  constructor(private readonly sites: SitesService) {}

  @Post()
  @ApiCreatedResponse({
    type: CreatedSiteView,
    description: 'The site and its first client key (shown once).',
  })
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
  get(@Param('siteId') siteId: string): Promise<SiteView> {
    return this.sites.get(siteId);
  }

  @Get(':siteId/keys')
  @ApiOkResponse({ type: [KeyView], description: 'Key ids and their state; never the keys.' })
  keys(@Param('siteId') siteId: string): Promise<KeyView[]> {
    return this.sites.listKeys(siteId);
  }

  @Post(':siteId/keys/rotate')
  @ApiCreatedResponse({ type: IssuedKeyView })
  rotate(@Param('siteId') siteId: string, @Body() body: RotateKeyDto): Promise<IssuedKeyView> {
    return this.sites.rotateKey(siteId, body.revokeExisting ?? true);
  }

  @Delete(':siteId/keys/:keyId')
  @HttpCode(204)
  async revoke(@Param('siteId') siteId: string, @Param('keyId') keyId: string): Promise<void> {
    await this.sites.revokeKey(siteId, keyId);
  }
}
