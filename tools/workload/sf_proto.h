/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * sf_proto.h - the "sf" wire protocol between sfload and sfserver.
 *
 * Little endian, 32 bytes each way:
 *	le64 id; le64 send_time_ns; le32 work_us; le32 flags; le64 reserved;
 * The response echoes id and send_time_ns; work_us holds the service time
 * the server actually spun; flags and reserved are zero.
 */
#ifndef __SF_PROTO_H
#define __SF_PROTO_H

#include <endian.h>
#include <stdint.h>
#include <string.h>

#define SF_MSG_SIZE		32

/*
 * Most service time one request may ask for (work_us), and most the server
 * spins per request whatever it was asked: 10 ms covers the service times of
 * the request/response servers satfeed models (tens of microseconds to a few
 * milliseconds), and bounds what one 32-byte request can cost the server.
 * sfserver answers a larger work_us with this much, and says so in the
 * response.
 */
#define SF_MAX_WORK_US		10000u
#define SF_MSG_OFF_ID		0
#define SF_MSG_OFF_SEND_TIME	8
#define SF_MSG_OFF_WORK_US	16

/* Fill a whole message: id, send time and work, the rest zero. */
static inline void sf_msg_put(unsigned char *buf, uint64_t id, uint64_t t,
			      uint32_t work_us)
{
	uint64_t le64;
	uint32_t le32;

	memset(buf, 0, SF_MSG_SIZE);
	le64 = htole64(id);
	memcpy(buf + SF_MSG_OFF_ID, &le64, sizeof(le64));
	le64 = htole64(t);
	memcpy(buf + SF_MSG_OFF_SEND_TIME, &le64, sizeof(le64));
	le32 = htole32(work_us);
	memcpy(buf + SF_MSG_OFF_WORK_US, &le32, sizeof(le32));
}

static inline uint64_t sf_msg_id(const unsigned char *buf)
{
	uint64_t le64;

	memcpy(&le64, buf + SF_MSG_OFF_ID, sizeof(le64));
	return le64toh(le64);
}

static inline uint64_t sf_msg_send_time(const unsigned char *buf)
{
	uint64_t le64;

	memcpy(&le64, buf + SF_MSG_OFF_SEND_TIME, sizeof(le64));
	return le64toh(le64);
}

static inline uint32_t sf_msg_work_us(const unsigned char *buf)
{
	uint32_t le32;

	memcpy(&le32, buf + SF_MSG_OFF_WORK_US, sizeof(le32));
	return le32toh(le32);
}

#endif /* __SF_PROTO_H */
