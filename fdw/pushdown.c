/*-------------------------------------------------------------------------
 *
 * pushdown.c
 *	  The WHERE conditions the reader evaluates itself: which clauses qualify
 *	  (planner), and their operands turned into the core's PfsCoreQual at the
 *	  start of each scan (executor).
 *
 * A clause qualifies when it tests one column of the foreign table against
 * an operand that does not depend on the table and is not volatile (a
 * constant, a parameter, or a column of another table in a parameterized
 * path):
 *	  bigint column  =, <, <=, >, >= (operand smallint, integer or bigint),
 *					 = ANY (array), IN (...)
 *	  text column	 =, = ANY, IN, LIKE 'prefix%' under a deterministic
 *					 collation (the reader compares UTF-8 bytes)
 *	  any column	 IS NULL, IS NOT NULL
 * Every such test is exact except a LIKE whose pattern goes on after its
 * literal prefix: the reader tests the prefix and the executor the rest.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_collation.h"
#include "catalog/pg_opfamily.h"
#include "catalog/pg_operator.h"
#include "catalog/pg_type.h"
#include "mb/pg_wchar.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

#include "shim.h"

/* The attribute's region column when the reader can test it with op, else -1. */
static int
qual_column(const PfsTableOptions *opts, const int *attr_column, int natts,
			RelOptInfo *baserel, Node *node, PfsCoreQualOp op)
{
	Var		   *var;
	int			column;

	if (node == NULL || !IsA(node, Var))
		return -1;
	var = (Var *) node;
	if (var->varno != baserel->relid || var->varlevelsup != 0 ||
		var->varattno <= 0 || var->varattno > natts)
		return -1;
	column = attr_column[var->varattno - 1];
	if (column < 0 || !pfs_core_qual_supported(opts->table, column, op))
		return -1;
	return column;
}

/* An operand the scan can evaluate once: free of this table and not volatile. */
static bool
operand_ok(PlannerInfo *root, RelOptInfo *baserel, Node *operand)
{
	if (operand == NULL || contain_volatile_functions(operand))
		return false;
	return !bms_is_member(baserel->relid, pull_varnos(root, operand));
}

static bool
int_type(Oid type)
{
	return type == INT2OID || type == INT4OID || type == INT8OID;
}

/*
 * The literal prefix of a LIKE pattern (backslash escapes), and whether the
 * pattern is that prefix followed only by '%'.
 */
static char *
like_prefix(text *pattern, bool *exact)
{
	const char *p = VARDATA_ANY(pattern);
	int			len = VARSIZE_ANY_EXHDR(pattern);
	StringInfoData prefix;
	int			i = 0;

	initStringInfo(&prefix);
	while (i < len && p[i] != '%' && p[i] != '_')
	{
		if (p[i] == '\\')
		{
			if (++i >= len)
				break;
		}
		appendStringInfoChar(&prefix, p[i++]);
	}
	*exact = i < len;
	for (; i < len; i++)
		if (p[i] != '%')
			*exact = false;
	return prefix.data;
}

/*
 * pfs_classify_clause
 *		Whether the reader can evaluate clause; fills *out if so.  attr_column
 *		maps attribute numbers (1-based, natts of them) to region columns.
 */
bool
pfs_classify_clause(PlannerInfo *root, RelOptInfo *baserel, const PfsTableOptions *opts,
					const int *attr_column, int natts, Expr *clause, PfsPushedQual *out)
{
	memset(out, 0, sizeof(*out));
	out->exact = true;

	if (IsA(clause, NullTest))
	{
		NullTest   *nt = (NullTest *) clause;
		PfsCoreQualOp op = nt->nulltesttype == IS_NULL ? PFS_QUAL_IS_NULL : PFS_QUAL_IS_NOT_NULL;

		if (nt->argisrow)
			return false;
		out->column = qual_column(opts, attr_column, natts, baserel, (Node *) nt->arg, op);
		out->op = op;
		return out->column >= 0;
	}

	if (IsA(clause, OpExpr))
	{
		OpExpr	   *opexpr = (OpExpr *) clause;
		Node	   *left,
				   *right;
		Oid			opno = opexpr->opno;
		int			strategy;
		bool		commuted = false;

		if (list_length(opexpr->args) != 2)
			return false;
		left = linitial(opexpr->args);
		right = lsecond(opexpr->args);
		if (!IsA(left, Var) || ((Var *) left)->varno != baserel->relid)
		{
			Node	   *tmp = left;

			left = right;
			right = tmp;
			commuted = true;
		}
		if (!IsA(left, Var) || !operand_ok(root, baserel, right))
			return false;

		if (opno == OID_TEXT_LIKE_OP && !commuted)
		{
			if (exprType(left) != TEXTOID || !IsA(right, Const) || ((Const *) right)->constisnull ||
				!OidIsValid(opexpr->inputcollid) ||
				!get_collation_isdeterministic(opexpr->inputcollid))
				return false;
			out->column = qual_column(opts, attr_column, natts, baserel, left, PFS_QUAL_PREFIX);
			out->op = PFS_QUAL_PREFIX;
			out->text = true;
			out->prefix = like_prefix(DatumGetTextPP(((Const *) right)->constvalue), &out->exact);
			return out->column >= 0 && out->prefix[0] != '\0';
		}

		if (exprType(left) == INT8OID && int_type(exprType(right)))
		{
			strategy = get_op_opfamily_strategy(opno, INTEGER_BTREE_FAM_OID);
			switch (strategy)
			{
				case BTLessStrategyNumber:
					out->op = commuted ? PFS_QUAL_GT : PFS_QUAL_LT;
					break;
				case BTLessEqualStrategyNumber:
					out->op = commuted ? PFS_QUAL_GE : PFS_QUAL_LE;
					break;
				case BTEqualStrategyNumber:
					out->op = PFS_QUAL_EQ;
					break;
				case BTGreaterEqualStrategyNumber:
					out->op = commuted ? PFS_QUAL_LE : PFS_QUAL_GE;
					break;
				case BTGreaterStrategyNumber:
					out->op = commuted ? PFS_QUAL_LT : PFS_QUAL_GT;
					break;
				default:
					return false;
			}
		}
		else if (exprType(left) == TEXTOID && exprType(right) == TEXTOID &&
				 get_op_opfamily_strategy(opno, TEXT_BTREE_FAM_OID) == BTEqualStrategyNumber &&
				 OidIsValid(opexpr->inputcollid) &&
				 get_collation_isdeterministic(opexpr->inputcollid))
		{
			out->op = PFS_QUAL_EQ;
			out->text = true;
		}
		else
			return false;
		out->column = qual_column(opts, attr_column, natts, baserel, left, out->op);
		out->operand = (Expr *) right;
		out->operand_type = exprType(right);
		return out->column >= 0;
	}

	if (IsA(clause, ScalarArrayOpExpr))
	{
		ScalarArrayOpExpr *saop = (ScalarArrayOpExpr *) clause;
		Node	   *left,
				   *right;
		Oid			element;

		if (!saop->useOr || list_length(saop->args) != 2)
			return false;
		left = linitial(saop->args);
		right = lsecond(saop->args);
		if (!IsA(left, Var) || !operand_ok(root, baserel, right))
			return false;
		element = get_element_type(exprType(right));
		if (exprType(left) == INT8OID && int_type(element) &&
			get_op_opfamily_strategy(saop->opno, INTEGER_BTREE_FAM_OID) == BTEqualStrategyNumber)
			out->text = false;
		else if (exprType(left) == TEXTOID && element == TEXTOID &&
				 get_op_opfamily_strategy(saop->opno, TEXT_BTREE_FAM_OID) == BTEqualStrategyNumber &&
				 OidIsValid(saop->inputcollid) && get_collation_isdeterministic(saop->inputcollid))
			out->text = true;
		else
			return false;
		out->op = PFS_QUAL_IN;
		out->array = true;
		out->column = qual_column(opts, attr_column, natts, baserel, left, PFS_QUAL_IN);
		out->operand = (Expr *) right;
		out->operand_type = element;
		return out->column >= 0;
	}
	return false;
}

/*
 * The descriptor of a pushed qual in fdw_private (plain integers and a
 * string, so that the plan can be copied): column, op, text, array, operand
 * type, operand's position in fdw_exprs (-1: none), exact, prefix.
 */
List *
pfs_pushed_qual_to_list(const PfsPushedQual *q, int operand_index)
{
	List	   *l = list_make4(makeInteger(q->column), makeInteger(q->op),
							   makeInteger(q->text), makeInteger(q->array));

	l = lappend(l, makeInteger((int) q->operand_type));
	l = lappend(l, makeInteger(operand_index));
	l = lappend(l, makeInteger(q->exact));
	return lappend(l, makeString(pstrdup(q->prefix != NULL ? q->prefix : "")));
}

void
pfs_pushed_qual_from_list(List *item, PfsPushedQual *q, int *operand_index)
{
	memset(q, 0, sizeof(*q));
	q->column = intVal(list_nth(item, 0));
	q->op = (PfsCoreQualOp) intVal(list_nth(item, 1));
	q->text = intVal(list_nth(item, 2)) != 0;
	q->array = intVal(list_nth(item, 3)) != 0;
	q->operand_type = (Oid) intVal(list_nth(item, 4));
	*operand_index = intVal(list_nth(item, 5));
	q->exact = intVal(list_nth(item, 6)) != 0;
	q->prefix = strVal(list_nth(item, 7));
}

/* An int operand as int64. */
static int64
int_value(Datum d, Oid type)
{
	return type == INT2OID ? DatumGetInt16(d) : type == INT4OID ? DatumGetInt32(d) : DatumGetInt64(d);
}

/* A text operand in UTF-8 (the region's encoding), palloc'd. */
static void
utf8_value(const char *s, int len, const char **out, uint32 *out_len)
{
	char	   *converted = pg_server_to_any(s, len, PG_UTF8);

	*out = converted;
	*out_len = converted == s ? (uint32) len : (uint32) strlen(converted);
}

/*
 * pfs_make_core_qual
 *		The core's form of a pushed qual whose operand evaluated to value (in
 *		the current memory context).  False when no row can pass (a NULL
 *		operand: the comparison is never true).
 */
bool
pfs_make_core_qual(const PfsPushedQual *q, Datum value, bool isnull, PfsCoreQual *out)
{
	memset(out, 0, sizeof(*out));
	out->column = q->column;
	out->op = q->op;
	out->text = q->text;
	if (q->op == PFS_QUAL_IS_NULL || q->op == PFS_QUAL_IS_NOT_NULL)
		return true;
	if (q->op == PFS_QUAL_PREFIX)
	{
		const char **texts = palloc(sizeof(char *));
		uint32	   *lens = palloc(sizeof(uint32));

		utf8_value(q->prefix, (int) strlen(q->prefix), &texts[0], &lens[0]);
		out->noperands = 1;
		out->texts = texts;
		out->lens = lens;
		return true;
	}
	if (isnull)
		return false;
	if (!q->array)
	{
		out->noperands = 1;
		if (q->text)
		{
			const char **texts = palloc(sizeof(char *));
			uint32	   *lens = palloc(sizeof(uint32));
			text	   *t = DatumGetTextPP(value);

			utf8_value(VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t), &texts[0], &lens[0]);
			out->texts = texts;
			out->lens = lens;
		}
		else
		{
			int64	   *ints = palloc(sizeof(int64));

			ints[0] = int_value(value, q->operand_type);
			out->ints = ints;
		}
		return true;
	}
	else
	{
		ArrayType  *array = DatumGetArrayTypeP(value);
		int16		typlen;
		bool		typbyval;
		char		typalign;
		Datum	   *elems;
		bool	   *nulls;
		int			n,
					i,
					k = 0;

		get_typlenbyvalalign(q->operand_type, &typlen, &typbyval, &typalign);
		deconstruct_array(array, q->operand_type, typlen, typbyval, typalign, &elems, &nulls, &n);
		if (q->text)
		{
			const char **texts = palloc(sizeof(char *) * Max(n, 1));
			uint32	   *lens = palloc(sizeof(uint32) * Max(n, 1));

			for (i = 0; i < n; i++)
			{
				text	   *t;

				if (nulls[i])	/* x = NULL is never true */
					continue;
				t = DatumGetTextPP(elems[i]);
				utf8_value(VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t), &texts[k], &lens[k]);
				k++;
			}
			out->texts = texts;
			out->lens = lens;
		}
		else
		{
			int64	   *ints = palloc(sizeof(int64) * Max(n, 1));

			for (i = 0; i < n; i++)
				if (!nulls[i])
					ints[k++] = int_value(elems[i], q->operand_type);
			out->ints = ints;
		}
		out->noperands = k;
		return true;				/* no element: the core rejects every row */
	}
}

/* The SQL of an op, for EXPLAIN. */
const char *
pfs_qual_op_name(PfsCoreQualOp op)
{
	switch (op)
	{
		case PFS_QUAL_EQ:
			return "=";
		case PFS_QUAL_LT:
			return "<";
		case PFS_QUAL_LE:
			return "<=";
		case PFS_QUAL_GT:
			return ">";
		case PFS_QUAL_GE:
			return ">=";
		case PFS_QUAL_IN:
			return "= ANY";
		case PFS_QUAL_PREFIX:
			return "LIKE";
		case PFS_QUAL_IS_NULL:
			return "IS NULL";
		case PFS_QUAL_IS_NOT_NULL:
			return "IS NOT NULL";
	}
	return "?";
}
