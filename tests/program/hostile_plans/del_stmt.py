# expect: parse-error line=3
def plan():
	del walk
