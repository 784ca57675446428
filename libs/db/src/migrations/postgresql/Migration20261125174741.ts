import { Migration } from '@mikro-orm/migrations';

export class Migration20261125174741 extends Migration {

  override name = 'Migration20261125174741';

  override up(): void | Promise<void> {
    this.addSql(`create table "speech_recognition" ("id" varchar(32) not null, "workspace_id" varchar(32) not null, "cache_key" varchar(64) not null, "provider" varchar(16) not null, "language_code" varchar(35) not null, "model" varchar(100) not null, "words" jsonb not null, "audio_sec" double precision not null, "created_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`alter table "speech_recognition" add constraint "speech_recognition_workspace_id_cache_key_unique" unique ("workspace_id", "cache_key");`);

    this.addSql(`create table "transcription" ("id" varchar(32) not null, "workspace_id" varchar(32) not null, "status" varchar(12) not null, "route" varchar(16) not null, "provider" varchar(16) not null, "engine" varchar(8) not null, "source_kind" varchar(8) not null, "source_value" text not null, "settings" jsonb not null, "cue_options" jsonb not null, "cache_mode" varchar(8) not null, "save" boolean not null, "name" varchar(200) null, "audio_hash" varchar(64) null, "audio_sec" double precision null, "from_cache" boolean not null, "recognition_id" varchar(32) null, "language_code" varchar(35) null, "model" varchar(100) null, "text" text null, "cues" jsonb null, "vtt_key" text null, "srt_key" text null, "error" jsonb null, "attempts" int not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "completed_at" timestamptz null, primary key ("id"));`);
    this.addSql(`create index "transcription_workspace_id_created_at_index" on "transcription" ("workspace_id", "created_at");`);
    this.addSql(`create index "transcription_workspace_id_source_kind_source_value_index" on "transcription" ("workspace_id", "source_kind", "source_value");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "speech_recognition" cascade;`);
    this.addSql(`drop table if exists "transcription" cascade;`);
  }

}
