# expect: parse-error line=3
def plan():
	return walk('kitchen')
