package expr

// And conjoins two bound BOOLEAN expressions with SQL's three-valued
// AND. The planner uses it to combine conditions it bound one by one.
func And(a, b Expr) Expr { return newLogic(logicAnd, a, b) }
