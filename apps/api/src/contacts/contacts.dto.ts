import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsString, Matches, Max, MaxLength, Min } from 'class-validator';
import { DEFAULT_CONTACTS_LIMIT, MAX_CONTACTS_LIMIT, MAX_SEARCH_RESULTS } from '#libs/suite';
import { MayOmit } from '../http/validation.js';

// The contacts rows of §4.5 and the §2 shapes (Contact, Contacts response, Contact label); docs/suite.md.

/** §4.5 Read contacts (query). */
export class ReadContactsQueryDto {
  @ApiPropertyOptional({ maxLength: 200, description: `Name, email or phone: Google's contact search (a prefix of a word; at most ${MAX_SEARCH_RESULTS} results, one page)` })
  @MayOmit() @IsString() @MaxLength(200) search?: string;

  @ApiPropertyOptional({ minimum: 1, maximum: MAX_CONTACTS_LIMIT, default: DEFAULT_CONTACTS_LIMIT, description: `Contacts a page (a search answers at most ${MAX_SEARCH_RESULTS})` })
  @MayOmit() @Type(() => Number) @IsInt() @Min(1) @Max(MAX_CONTACTS_LIMIT) limit?: number;

  @ApiPropertyOptional({ description: 'nextPageToken of the previous page (not with search)' })
  @MayOmit() @IsString() @MaxLength(1024) @Matches(/^[\x21-\x7e]+$/, { message: 'pageToken must be a nextPageToken of a previous page' }) pageToken?: string;
}

/** §2 Contact. */
export class ContactDto {
  @ApiProperty({ example: 'c7382647204876158', description: "People's resourceName without `people/`" }) id!: string;
  @ApiProperty({ nullable: true, type: String, example: 'Ada Lovelace' }) displayName!: string | null;
  @ApiProperty({ nullable: true, type: String }) firstName!: string | null;
  @ApiProperty({ nullable: true, type: String }) lastName!: string | null;
  @ApiProperty({ nullable: true, type: String, description: 'The primary email, else the first' }) email!: string | null;
  @ApiProperty({ type: [String] }) allEmails!: string[];
  @ApiProperty({ nullable: true, type: String, description: 'The primary phone number, else the first' }) phone!: string | null;
  @ApiProperty({ type: [String] }) allPhones!: string[];
  @ApiProperty({ nullable: true, type: String }) organization!: string | null;
  @ApiProperty({ nullable: true, type: String }) jobTitle!: string | null;
  @ApiProperty({ nullable: true, type: String }) city!: string | null;
  @ApiProperty({ nullable: true, type: String }) country!: string | null;
  @ApiProperty({ nullable: true, type: String, description: "null for Google's generated placeholder" }) photoUrl!: string | null;
  @ApiProperty({ nullable: true, type: String }) notes!: string | null;
  @ApiProperty({ type: [String], description: 'Contact label ids (GET .../contacts/groups)', example: ['myContacts'] }) groupIds!: string[];
}

/** §2 Contacts response. */
export class ContactsPageDto {
  @ApiProperty({ type: [ContactDto] }) contacts!: ContactDto[];
  @ApiProperty({ nullable: true, type: String, description: 'Pass as pageToken for the next page; null at the end (and on a search)' }) nextPageToken!: string | null;
  @ApiProperty({ description: "The account's contacts (Google's totalPeople); on a search, the results returned" }) total!: number;
}

/** §2 Contact label. */
export class ContactLabelDto {
  @ApiProperty({ example: 'myContacts', description: "People's contact group resourceName without `contactGroups/`" }) id!: string;
  @ApiProperty({ example: 'My Contacts' }) name!: string;
  @ApiProperty({ example: 42 }) count!: number;
}
