import { ApiProperty } from '@nestjs/swagger';

export class LivenessDto {
  @ApiProperty({ enum: ['ok'] }) status!: string;
}

class CheckDto {
  @ApiProperty() ok!: boolean;
  @ApiProperty({ required: false }) detail?: string;
}

class ReadinessChecksDto {
  @ApiProperty({ type: CheckDto }) database!: CheckDto;
  @ApiProperty({ type: CheckDto }) redis!: CheckDto;
  @ApiProperty({ type: CheckDto }) storage!: CheckDto;
}

export class ReadinessDto {
  @ApiProperty({ enum: ['ready'] }) status!: string;
  @ApiProperty({ type: ReadinessChecksDto }) checks!: ReadinessChecksDto;
}
