# expect: parse-error line=3
def plan():
	getattr('kitchen', 'lime')
