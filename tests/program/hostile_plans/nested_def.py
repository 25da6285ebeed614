# expect: parse-error line=4
def plan():
	walk('kitchen')
	def helper():
		grab('lime')
