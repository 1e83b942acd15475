import { Module } from '@nestjs/common';
import { InstancesService } from './instances.service.js';

@Module({ providers: [InstancesService], exports: [InstancesService] })
export class InstancesModule {}
