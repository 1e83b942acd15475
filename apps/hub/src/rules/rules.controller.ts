import {
  BadRequestException,
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Param,
  Post,
  Put,
  Query,
  UseGuards,
} from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiBody,
  ApiCreatedResponse,
  ApiOkResponse,
  ApiQuery,
  ApiTags,
  ApiUnprocessableEntityResponse,
} from '@nestjs/swagger';
import type { Rule } from '@rampart/rules-core/rules/model';
import { AdminGuard } from '../auth/admin.guard.js';
import { RuleListView, RuleSetDto } from './rules.dto.js';
import { RulesService } from './rules.service.js';

const RULE_BODY = {
  schema: { type: 'object', additionalProperties: true },
  description: 'One rule (see the rules-core README for every type).',
};

@ApiTags('rules')
@ApiBearerAuth('admin')
@UseGuards(AdminGuard)
@ApiUnprocessableEntityResponse({
  description: '`issues` lists each problem: rule index, id, field, reason.',
})
@Controller('v1/sites/:siteId/rules')
export class RulesController {
  constructor(private readonly rules: RulesService) {}

  @Get()
  @ApiOkResponse({ type: RuleListView })
  list(@Param('siteId') siteId: string): Promise<RuleListView> {
    return this.rules.list(siteId) as Promise<RuleListView>;
  }

  @Get('export')
  @ApiOkResponse({
    type: RuleSetDto,
    description: 'The rule-set document, ready for import or the CLI.',
  })
  async export(@Param('siteId') siteId: string): Promise<{ rules: readonly Rule[] }> {
    return { rules: (await this.rules.list(siteId)).rules };
  }

  @Post('import')
  @ApiQuery({ name: 'mode', enum: ['replace', 'append'], required: false })
  @ApiOkResponse({ type: RuleListView })
  @HttpCode(200)
  import(
    @Param('siteId') siteId: string,
    @Body() body: RuleSetDto,
    @Query('mode') mode = 'replace',
  ): Promise<RuleListView> {
    if (mode !== 'replace' && mode !== 'append') {
      throw new BadRequestException('mode must be "replace" or "append"');
    }
    return this.rules.importRules(siteId, body.rules, mode) as Promise<RuleListView>;
  }

  @Get(':ruleId')
  get(@Param('siteId') siteId: string, @Param('ruleId') ruleId: string): Promise<Rule> {
    return this.rules.get(siteId, ruleId);
  }

  @Post()
  @ApiBody(RULE_BODY)
  @ApiCreatedResponse({ description: 'The stored (normalised) rule.' })
  create(@Param('siteId') siteId: string, @Body() body: unknown): Promise<Rule> {
    return this.rules.create(siteId, body);
  }

  @Put(':ruleId')
  @ApiBody(RULE_BODY)
  replace(
    @Param('siteId') siteId: string,
    @Param('ruleId') ruleId: string,
    @Body() body: unknown,
  ): Promise<Rule> {
    return this.rules.replace(siteId, ruleId, body);
  }

  @Delete(':ruleId')
  @HttpCode(204)
  async remove(@Param('siteId') siteId: string, @Param('ruleId') ruleId: string): Promise<void> {
    await this.rules.remove(siteId, ruleId);
  }
}
