import { Module } from '@nestjs/common';
import { ReportsModule } from '../reports/reports.module.js';
import { SitesModule } from '../sites/sites.module.js';
import { JaegerQueryService } from './jaeger-query.service.js';
import { TracesController } from './traces.controller.js';

/** The traces of events' requests, read from Jaeger for the dashboard. */
@Module({
  imports: [ReportsModule, SitesModule],
  controllers: [TracesController],
  providers: [JaegerQueryService],
})
export class TracesModule {}
