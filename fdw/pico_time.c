/*-------------------------------------------------------------------------
 *
 * pico_time.c
 *	  format_pico_time(): a picosecond count as text, like MySQL 8's
 *	  FORMAT_PICO_TIME().
 *
 * The unit is the largest of ps, ns, us, ms, s, min, h and d that the
 * absolute value reaches; the value is shown with two decimals ('1.23 ms'),
 * in exponent notation from 100000 units of days on, and picoseconds as a
 * whole number padded to three characters ('  5 ps').  Negative values keep
 * their sign.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "fmgr.h"
#include "utils/builtins.h"

PG_FUNCTION_INFO_V1(perfschema_format_pico_time);
PG_FUNCTION_INFO_V1(perfschema_format_pico_time_int8);

typedef struct PicoUnit
{
	double		picoseconds;
	const char *name;
} PicoUnit;

static const PicoUnit units[] = {
	{86400e12, "d"},
	{3600e12, "h"},
	{60e12, "min"},
	{1e12, "s"},
	{1e9, "ms"},
	{1e6, "us"},
	{1e3, "ns"},
};

static text *
format_pico_time(double value)
{
	double		magnitude = fabs(value);
	char		buf[64];
	int			i;

	for (i = 0; i < lengthof(units); i++)
	{
		if (magnitude >= units[i].picoseconds)
		{
			double		scaled = value / units[i].picoseconds;

			snprintf(buf, sizeof(buf),
					 fabs(scaled) >= 100000.0 ? "%4.2e %s" : "%4.2f %s",
					 scaled, units[i].name);
			return cstring_to_text(buf);
		}
	}
	snprintf(buf, sizeof(buf), "%3d ps", (int) value);
	return cstring_to_text(buf);
}

/* format_pico_time(double precision): also takes numeric (sum of bigints). */
Datum
perfschema_format_pico_time(PG_FUNCTION_ARGS)
{
	double		value = PG_GETARG_FLOAT8(0);

	if (!isfinite(value))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cannot format %s as a time", value > 0 ? "Infinity" : value < 0 ? "-Infinity" : "NaN")));
	PG_RETURN_TEXT_P(format_pico_time(value));
}

/* format_pico_time(bigint): the type of every time column. */
Datum
perfschema_format_pico_time_int8(PG_FUNCTION_ARGS)
{
	PG_RETURN_TEXT_P(format_pico_time((double) PG_GETARG_INT64(0)));
}
