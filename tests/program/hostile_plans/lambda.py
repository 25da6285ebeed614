# expect: parse-error line=3
def plan():
	grab(lambda: 'lime')
