# expect: parse-error line=3
def plan():
	for x in objects:
		grab(x)
