import { Module } from '@nestjs/common';
import { BuildsModule } from '../builds/builds.module.js';
import { DatasetsController } from './datasets.controller.js';
import { DatasetsService } from './datasets.service.js';

@Module({
  imports: [BuildsModule],
  controllers: [DatasetsController],
  providers: [DatasetsService],
})
export class DatasetsModule {}
