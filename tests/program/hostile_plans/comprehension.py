# expect: parse-error line=3
def plan():
	[grab(x) for x in ['lime', 'salmon']]
