# expect: parse-error line=3
def plan():
	if (x := 'lime') in 'hands':
		grab(x)
