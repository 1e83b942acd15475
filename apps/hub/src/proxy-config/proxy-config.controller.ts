/**
 * Prexy's configuration of a site through the API (admin token):
 *
 * - `GET /v1/sites/:siteId/proxy`: the configuration in force (empty until set).
 * - `PUT /v1/sites/:siteId/proxy`: replaces it whole (routes, rule sets, `edgeWaf`); 422 naming
 *   every bad field, with a rule that does not compile named by `ruleSets[i].rules[j]`, its
 *   position and construct; nothing changed then. The site's next snapshot carries it.
 * - `DELETE /v1/sites/:siteId/proxy`: removes it.
 */
import { Body, Controller, Delete, Get, HttpCode, Param, Put } from '@nestjs/common';
import { ApiBody, ApiNoContentResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { ProxyConfig } from '@rampart/rules-core/proxy-config/proxy-config';
import { proxyConfigSchema } from '@rampart/rules-core/proxy-config/proxy-config-schema';
import { AdminAuth } from '../auth/admin.guard.js';
import { schemaComponent } from '../http/openapi.js';
import { ApiProblems, JSON_BODY_PROBLEMS } from '../http/problem-details.js';
import { ProxyConfigService } from './proxy-config.service.js';

const CONFIG_SCHEMA = schemaComponent('ProxyConfig', proxyConfigSchema(true));
const CONFIG_INPUT_SCHEMA = schemaComponent('ProxyConfigInput', proxyConfigSchema(false));

@ApiTags('proxy')
@AdminAuth()
@ApiProblems({ 404: 'No such site.' })
@Controller('v1/sites/:siteId/proxy')
export class ProxyConfigController {
  constructor(private readonly proxy: ProxyConfigService) {}

  @Get()
  @ApiOkResponse({
    schema: CONFIG_SCHEMA,
    description:
      'Every field present, defaults filled in; the empty configuration (no routes, no rule sets) when none was set or it was deleted.',
  })
  get(@Param('siteId') siteId: string): Promise<ProxyConfig> {
    return this.proxy.get(siteId);
  }

  @Put()
  @ApiBody({ schema: CONFIG_INPUT_SCHEMA, required: true })
  @ApiOkResponse({ schema: CONFIG_SCHEMA, description: 'The configuration now in force.' })
  @ApiProblems(JSON_BODY_PROBLEMS, {
    422: 'The configuration is invalid (`issues` names each field: also what JSON Schema cannot state, such as a pattern the engine cannot compile, with its position and construct, or a host or path prefix given twice); nothing was changed.',
  })
  replace(@Param('siteId') siteId: string, @Body() body: unknown): Promise<ProxyConfig> {
    return this.proxy.replace(siteId, body);
  }

  @Delete()
  @HttpCode(204)
  @ApiNoContentResponse({ description: 'The site has no prexy configuration any more.' })
  async remove(@Param('siteId') siteId: string): Promise<void> {
    await this.proxy.remove(siteId);
  }
}
