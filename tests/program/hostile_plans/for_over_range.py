# expect: parse-error line=3
def plan():
	for i in range(1000000):
		walk('kitchen')
