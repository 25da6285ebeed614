# expect: parse-error line=3
def plan():
	global kitchen
	walk('kitchen')
